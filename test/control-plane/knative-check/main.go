// knative-check runs Knative's own code on olm-medic's deployment (test infrastructure; built into
// the cache by test/control-plane/build.sh, never shipped):
//
//	knative-check validate --eventing-config DIR --serving-config DIR FILE...
//	                                 SetDefaults + Validate (the apis.Validatable implementations of
//	                                 Trigger, Broker, ApiServerSource, PingSource, serving Service) on
//	                                 every object of the multi-document YAML files ("-" = stdin), in the
//	                                 context the webhooks build from the ConfigMaps a default install
//	                                 ships (config/core/configmaps of each module, copied by build.sh);
//	                                 also rejects fields Knative's Go types do not know. JobSink's
//	                                 validation dry-run creates its Job: pass --kubeconfig for that. One JSON line per
//	                                 object (errors and warnings apart); exit 1 if any object has an error.
//	knative-check route --broker NAME TRIGGERS.yaml EVENTS.jsonl...
//	                                 evaluates each Trigger of that Broker on every structured-mode
//	                                 CloudEvent (one JSON per line, '#' comments skipped) exactly as the
//	                                 MT broker filter does (pkg/broker/filter.filterEvent: spec.filters
//	                                 via pkg/eventfilter/subscriptionsapi, else spec.filter.attributes,
//	                                 else deliver). One JSON line per event with the Triggers that
//	                                 deliver it.
//	knative-check jobsink-secrets --namespace NS --name SINK EVENTS.jsonl...
//	                                 what Knative's JobSink (cmd/jobsink) stores for each event a Broker
//	                                 delivers to it: the event is sent as a binary-mode HTTP request,
//	                                 read back with binding.ToEvent, and kept as event.MarshalJSON() in
//	                                 the `event` key of a Secret named and labelled as JobSink does.
//	                                 One Secret (JSON) per line.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"crypto/md5" //nolint:gosec // JobSink's own naming
	"encoding/hex"
	"net/http/httptest"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	eventingconfig "knative.dev/eventing/pkg/apis/config"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/eventing/pkg/apis/feature"
	messagingconfig "knative.dev/eventing/pkg/apis/messaging/config"
	"knative.dev/eventing/pkg/apis/sinks"
	sinksv1alpha1 "knative.dev/eventing/pkg/apis/sinks/v1alpha1"
	sourcesconfig "knative.dev/eventing/pkg/apis/sources/config"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	"knative.dev/eventing/pkg/eventfilter"
	"knative.dev/eventing/pkg/eventfilter/attributes"
	"knative.dev/eventing/pkg/eventfilter/subscriptionsapi"
	"knative.dev/pkg/apis"
	"knative.dev/pkg/configmap"
	"knative.dev/pkg/kmeta"
	servingconfig "knative.dev/serving/pkg/apis/config"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
)

type object interface {
	apis.Defaultable
	apis.Validatable
}

// newObject returns the Knative type for apiVersion/kind and whether it is a serving object.
func newObject(apiVersion, kind string) (object, bool) {
	switch apiVersion + "/" + kind {
	case "eventing.knative.dev/v1/Trigger":
		return &eventingv1.Trigger{}, false
	case "eventing.knative.dev/v1/Broker":
		return &eventingv1.Broker{}, false
	case "sources.knative.dev/v1/ApiServerSource":
		return &sourcesv1.ApiServerSource{}, false
	case "sources.knative.dev/v1/PingSource":
		return &sourcesv1.PingSource{}, false
	case "sinks.knative.dev/v1alpha1/JobSink":
		return &sinksv1alpha1.JobSink{}, false
	case "serving.knative.dev/v1/Service":
		return &servingv1.Service{}, true
	}
	return nil, false
}

// configMaps reads every ConfigMap of the YAML files in dir.
func configMaps(dir string) ([]*corev1.ConfigMap, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*corev1.ConfigMap
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		f, err := os.Open(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		docs, err := documents(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		for _, d := range docs {
			cm := &corev1.ConfigMap{}
			if err := json.Unmarshal(d, cm); err == nil && cm.Kind == "ConfigMap" {
				out = append(out, cm)
			}
		}
	}
	return out, nil
}

// contexts builds what the eventing and serving webhooks attach to a request (their cmd/webhook
// ctxFunc) from the ConfigMaps a default install ships.
func contexts(eventingDir, servingDir string) (func(context.Context) context.Context, func(context.Context) context.Context, error) {
	ecms, err := configMaps(eventingDir)
	if err != nil {
		return nil, nil, err
	}
	scms, err := configMaps(servingDir)
	if err != nil {
		return nil, nil, err
	}
	logger := zap.NewNop().Sugar()
	ew := configmap.NewStaticWatcher(ecms...)
	store := eventingconfig.NewStore(logger)
	store.WatchConfigs(ew)
	channelStore := messagingconfig.NewStore(logger)
	channelStore.WatchConfigs(ew)
	pingStore := sourcesconfig.NewStore(logger)
	pingStore.WatchConfigs(ew)
	featureStore := feature.NewStore(logger)
	featureStore.WatchConfigs(ew)
	servingStore := servingconfig.NewStore(logger)
	servingStore.WatchConfigs(configmap.NewStaticWatcher(scms...))
	return func(ctx context.Context) context.Context {
			return featureStore.ToContext(channelStore.ToContext(pingStore.ToContext(store.ToContext(ctx))))
		}, func(ctx context.Context) context.Context {
			return servingStore.ToContext(ctx)
		}, nil
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// documents splits multi-document YAML (or JSON) into JSON documents.
func documents(r io.Reader) ([][]byte, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out [][]byte
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		out = append(out, raw)
	}
}

func open(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

type result struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Name       string   `json:"name"`
	Namespace  string   `json:"namespace,omitempty"`
	Checked    bool     `json:"checked"`
	Errors     []string `json:"errors"`
	Warnings   []string `json:"warnings"`
}

func messages(fe *apis.FieldError) []string {
	out := []string{}
	if fe == nil {
		return out
	}
	for _, e := range fe.WrappedErrors() {
		out = append(out, e.Error())
	}
	if len(out) == 0 && fe.Error() != "" {
		out = append(out, fe.Error())
	}
	return out
}

func validate(args []string) int {
	var eventingDir, servingDir, kubeconfig string
	for len(args) >= 2 && strings.HasPrefix(args[0], "--") {
		switch args[0] {
		case "--eventing-config":
			eventingDir = args[1]
		case "--serving-config":
			servingDir = args[1]
		case "--kubeconfig":
			kubeconfig = args[1]
		default:
			fmt.Fprintf(os.Stderr, "unknown flag %s\n", args[0])
			return 2
		}
		args = args[2:]
	}
	if eventingDir == "" || servingDir == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: knative-check validate --eventing-config DIR --serving-config DIR FILE...")
		return 2
	}
	eventingCtx, servingCtx, err := contexts(eventingDir, servingDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		base := eventingCtx
		eventingCtx = func(ctx context.Context) context.Context {
			return sinks.WithConfig(base(ctx), &sinks.Config{KubeClient: client})
		}
	}
	paths := args
	failed := false
	enc := json.NewEncoder(os.Stdout)
	for _, p := range paths {
		f, err := open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		docs, err := documents(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
			return 2
		}
		for _, doc := range docs {
			var h header
			if err := json.Unmarshal(doc, &h); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
				return 2
			}
			r := result{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace, Errors: []string{}, Warnings: []string{}}
			if obj, isServing := newObject(h.APIVersion, h.Kind); obj != nil {
				r.Checked = true
				dec := json.NewDecoder(bytes.NewReader(doc))
				dec.DisallowUnknownFields() // a field Knative's types do not know would be pruned or ignored
				if err := dec.Decode(obj); err != nil {
					r.Errors = append(r.Errors, "decode: "+err.Error())
				} else if _, isJobSink := obj.(*sinksv1alpha1.JobSink); isJobSink && kubeconfig == "" {
					r.Errors = append(r.Errors, "JobSink validation creates its Job with dryRun: pass --kubeconfig")
				} else {
					ctx := apis.WithinCreate(context.Background())
					if isServing {
						ctx = servingCtx(ctx)
					} else {
						ctx = eventingCtx(ctx)
					}
					obj.SetDefaults(ctx)
					if fe := obj.Validate(ctx); fe != nil {
						r.Errors = messages(fe.Filter(apis.ErrorLevel))
						r.Warnings = messages(fe.Filter(apis.WarningLevel))
					}
				}
			}
			if len(r.Errors) > 0 {
				failed = true
			}
			_ = enc.Encode(r)
		}
	}
	if failed {
		return 1
	}
	return 0
}

// filterEvent mirrors knative.dev/eventing pkg/broker/filter (*Handler).filterEvent.
func filterEvent(ctx context.Context, logger *zap.Logger, t *eventingv1.Trigger, ev cloudevents.Event) eventfilter.FilterResult {
	switch {
	case len(t.Spec.Filters) > 0:
		return subscriptionsapi.CreateSubscriptionsAPIFilters(logger, t.Spec.Filters).Filter(ctx, ev)
	case t.Spec.Filter != nil:
		return attributes.NewAttributesFilter(t.Spec.Filter.Attributes).Filter(ctx, ev)
	default:
		return eventfilter.NoFilter
	}
}

type routed struct {
	File      string   `json:"file"`
	Line      int      `json:"line"`
	Type      string   `json:"type"`
	Kind      string   `json:"kind,omitempty"`
	APIVer    string   `json:"apiversion,omitempty"`
	Name      string   `json:"name,omitempty"`
	Delivered []string `json:"delivered"`
}

func route(args []string) int {
	broker := ""
	if len(args) >= 2 && args[0] == "--broker" {
		broker, args = args[1], args[2:]
	}
	if broker == "" || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: knative-check route --broker NAME TRIGGERS.yaml EVENTS.jsonl...")
		return 2
	}
	f, err := open(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	docs, err := documents(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var triggers []*eventingv1.Trigger
	for _, doc := range docs {
		var h header
		_ = json.Unmarshal(doc, &h)
		if h.APIVersion != "eventing.knative.dev/v1" || h.Kind != "Trigger" {
			continue
		}
		t := &eventingv1.Trigger{}
		if err := json.Unmarshal(doc, t); err != nil {
			fmt.Fprintf(os.Stderr, "trigger: %v\n", err)
			return 2
		}
		if t.Spec.Broker == broker {
			triggers = append(triggers, t)
		}
	}
	if len(triggers) == 0 {
		fmt.Fprintf(os.Stderr, "no Trigger of broker %q\n", broker)
		return 2
	}
	logger := zap.NewNop()
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	for _, p := range args[1:] {
		ef, err := open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		sc := bufio.NewScanner(ef)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			ev := cloudevents.NewEvent()
			if err := json.Unmarshal([]byte(text), &ev); err != nil {
				fmt.Fprintf(os.Stderr, "%s:%d: %v\n", p, line, err)
				return 2
			}
			r := routed{File: p, Line: line, Type: ev.Type(), Delivered: []string{}}
			ext := ev.Extensions()
			r.Kind, _ = ext["kind"].(string)
			r.APIVer, _ = ext["apiversion"].(string)
			r.Name, _ = ext["name"].(string)
			for _, t := range triggers {
				if filterEvent(ctx, logger, t, ev) != eventfilter.FailFilter {
					r.Delivered = append(r.Delivered, t.Name)
				}
			}
			_ = enc.Encode(r)
		}
		ef.Close()
		if err := sc.Err(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
			return 2
		}
	}
	return 0
}

// jobName is cmd/jobsink toJobName (package main there, so not importable).
func jobName(sink, source, id string) string {
	h := md5.Sum([]byte(source + id)) //nolint:gosec
	return kmeta.ChildName(sink+"-", hex.EncodeToString(h[:]))
}

func jobsinkSecrets(args []string) int {
	var ns, name string
	for len(args) >= 2 && strings.HasPrefix(args[0], "--") {
		switch args[0] {
		case "--namespace":
			ns = args[1]
		case "--name":
			name = args[1]
		}
		args = args[2:]
	}
	if ns == "" || name == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: knative-check jobsink-secrets --namespace NS --name SINK EVENTS.jsonl...")
		return 2
	}
	enc := json.NewEncoder(os.Stdout)
	for _, p := range args {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			in := cloudevents.NewEvent()
			if err := json.Unmarshal([]byte(line), &in); err != nil {
				fmt.Fprintf(os.Stderr, "%s:%d: %v\n", p, i+1, err)
				return 2
			}
			// the Broker delivers in binary mode; JobSink reads it with binding.ToEvent
			req := httptest.NewRequest("POST", "/"+ns+"/"+name, nil)
			if err := cehttp.WriteRequest(context.Background(), binding.ToMessage(&in), req); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			msg := cehttp.NewMessageFromHttpRequest(req)
			ev, err := binding.ToEvent(context.Background(), msg)
			msg.Finish(nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			if err := ev.Validate(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			b, err := ev.MarshalJSON()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			jn := jobName(name, ev.Source(), ev.ID())
			immutable := true
			_ = enc.Encode(corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: jn, Namespace: ns, Labels: map[string]string{"sinks.knative.dev/job-sink-id": jn, "sinks.knative.dev/job-sink-name": name}},
				Immutable:  &immutable,
				Data:       map[string][]byte{"event": b},
				Type:       corev1.SecretTypeOpaque,
			})
		}
	}
	return 0
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: knative-check validate --eventing-config DIR --serving-config DIR FILE... | route --broker NAME TRIGGERS.yaml EVENTS.jsonl...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "validate":
		os.Exit(validate(os.Args[2:]))
	case "route":
		os.Exit(route(os.Args[2:]))
	case "jobsink-secrets":
		os.Exit(jobsinkSecrets(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "unknown command %q\n", os.Args[1])
	os.Exit(2)
}

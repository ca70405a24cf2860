//go:build tools

// Package tools pins the adapter's main package.
package tools

import _ "knative.dev/eventing/cmd/apiserver_receive_adapter"

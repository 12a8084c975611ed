package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/agentstepup/asu/stepup/gateway"
)

// listenMetrics opens the listener of the Prometheus endpoint (-metrics)
// and the metrics it serves; none when -metrics is not given. It is a
// listener of its own: the agent API and the approval site never serve
// metrics, and a scraper never reaches either of them.
func listenMetrics(o options) (*gateway.Metrics, net.Listener, error) {
	if o.metrics == "" {
		return nil, nil, nil
	}
	if !strings.HasSuffix(o.metrics, ":0") && (o.metrics == o.agentAddr || o.metrics == o.siteAddr) {
		return nil, nil, fmt.Errorf("-metrics %s: the metrics need a listener of their own, not the agent API's or the approval site's", o.metrics)
	}
	m, err := gateway.NewMetrics()
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", o.metrics)
	if err != nil {
		return nil, nil, fmt.Errorf("-metrics: %w", err)
	}
	return m, ln, nil
}

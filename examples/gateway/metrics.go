package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/agentstepup/asu/stepup/gateway"
)

// listenMetrics opens the operator's listener (-metrics, operator.go)
// and the metrics it serves; none when -metrics is not given. It is a
// listener of its own: the agent API and the approval site never serve
// metrics, and a scraper never reaches either of them.
func listenMetrics(o options, w io.Writer) (*gateway.Metrics, net.Listener, string, error) {
	if o.metrics == "" {
		if o.svc.operatorTokenFile != "" {
			return nil, nil, "", errors.New("-operator-token-file: give -metrics ADDR too: the token guards the operator's listener")
		}
		return nil, nil, "", nil
	}
	if !strings.HasSuffix(o.metrics, ":0") && (o.metrics == o.agentAddr || o.metrics == o.siteAddr) {
		return nil, nil, "", fmt.Errorf("-metrics %s: the metrics need a listener of their own, not the agent API's or the approval site's", o.metrics)
	}
	m, err := gateway.NewMetrics()
	if err != nil {
		return nil, nil, "", err
	}
	ln, u, err := listenOperator(o, w)
	if err != nil {
		return nil, nil, "", err
	}
	return m, ln, u, nil
}

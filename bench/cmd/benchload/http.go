package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
)

type httpClient struct {
	hc          *http.Client
	url         string
	contentType string
	encoding    string
	headers     headerList
	p           payload
}

// newHTTPClient returns an OTLP/HTTP client over HTTP/1.1 keep-alive
// connections, one per request in flight: what the OpenTelemetry SDKs'
// http/protobuf and http/json exporters use.
func newHTTPClient(cfg config, p payload) *httpClient {
	tr := &http.Transport{
		MaxIdleConnsPerHost: cfg.concurrency,
		IdleConnTimeout:     time.Minute,
		// Bodies are pre-compressed; responses are small.
		DisableCompression: true,
	}
	c := &httpClient{
		hc:          &http.Client{Transport: tr, Timeout: time.Minute},
		url:         "http://" + cfg.addr + p.httpPath,
		contentType: "application/x-protobuf",
		headers:     cfg.headers,
		p:           p,
	}
	if p.json {
		c.contentType = "application/json"
	}
	if p.codec != compression.Identity {
		c.encoding = p.codec.String()
	}
	return c
}

func (c *httpClient) close() { c.hc.CloseIdleConnections() }

// export makes one POST and requires 200 (OTLP/HTTP "Full Success").
func (c *httpClient) export(i int64) error {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(c.p.at(i).body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", c.contentType)
	if c.encoding != "" {
		req.Header.Set("Content-Encoding", c.encoding)
	}
	for _, kv := range c.headers {
		req.Header.Add(kv[0], kv[1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %.200q", c.url, resp.Status, body)
	}
	return nil
}

package controlplane

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// compactRevKey is the etcd key in which kube-apiserver's compactor keeps
// the last compacted revision; the API server watches it.
const compactRevKey = "compact_rev_key"

// CompactEtcd compacts etcd's history up to its current revision the way
// kube-apiserver's own compactor does (it records the revision under
// compact_rev_key, which the API server watches, then compacts), and
// returns that revision: a list at any older resourceVersion then answers
// 410 Expired, once the API server has noticed (its watch cache polls the
// compaction every 15 s). It talks to etcd's JSON gateway on the client URL.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	url, err := cp.etcdURL()
	if err != nil {
		return 0, err
	}
	var put struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// The put is the newest revision; compacting to it leaves every older
	// one behind.
	key := base64.StdEncoding.EncodeToString([]byte(compactRevKey))
	if err := etcdCall(ctx, url+"/v3/kv/range", map[string]any{"key": key}, &put); err != nil {
		return 0, err
	}
	cur, err := strconv.ParseInt(put.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", put.Header.Revision, err)
	}
	rev := cur + 1
	value := base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(rev, 10)))
	if err := etcdCall(ctx, url+"/v3/kv/put", map[string]any{"key": key, "value": value}, &put); err != nil {
		return 0, err
	}
	if put.Header.Revision != strconv.FormatInt(rev, 10) {
		// Something wrote meanwhile: compact to what the put got.
		if rev, err = strconv.ParseInt(put.Header.Revision, 10, 64); err != nil {
			return 0, fmt.Errorf("etcd revision %q: %w", put.Header.Revision, err)
		}
	}
	if err := etcdCall(ctx, url+"/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

// etcdURL is etcd's client URL, from the flags it was started with.
func (cp *ControlPlane) etcdURL() (string, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	p := cp.procs["etcd"]
	if p == nil {
		return "", errors.New("etcd is not running")
	}
	for _, a := range p.cmd.Args {
		if u, ok := strings.CutPrefix(a, "--advertise-client-urls="); ok {
			return u, nil
		}
	}
	return "", errors.New("etcd was started without --advertise-client-urls")
}

// etcdCall posts req as JSON to etcd's gateway and decodes the answer into
// resp (when not nil).
func etcdCall(ctx context.Context, url string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		return fmt.Errorf("etcd %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", url, res.Status, strings.TrimSpace(buf.String()))
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(buf.Bytes(), resp); err != nil {
		return fmt.Errorf("etcd %s: %w", url, err)
	}
	return nil
}

package exporter

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
)

// maxPooled is the largest response buffer kept for reuse.
const maxPooled = 1 << 20

// bodies keeps response buffers between scrapes.
type bodies struct{ pool sync.Pool }

func (b *bodies) get() *bytes.Buffer {
	if buf, ok := b.pool.Get().(*bytes.Buffer); ok {
		buf.Reset()
		return buf
	}
	return new(bytes.Buffer)
}

func (b *bodies) put(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooled {
		b.pool.Put(buf)
	}
}

// oneWrite serves h's response with a Content-Length, in as few writes as
// the connection's buffer allows (two for a usual scrape instead of one
// per 4 KiB chunk plus chunk framing): syscalls are the dearest part of a
// scrape on a virtual machine.
func (b *bodies) oneWrite(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := b.get()
		bw := &bufferedWriter{ResponseWriter: w, buf: buf, code: http.StatusOK}
		h.ServeHTTP(bw, r)
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		w.WriteHeader(bw.code)
		w.Write(buf.Bytes())
		b.put(buf)
	})
}

// bufferedWriter keeps the status and the body until the handler is done.
type bufferedWriter struct {
	http.ResponseWriter
	buf         *bytes.Buffer
	code        int
	wroteHeader bool
}

func (b *bufferedWriter) WriteHeader(code int) {
	if !b.wroteHeader {
		b.code, b.wroteHeader = code, true
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.wroteHeader = true
	return b.buf.Write(p)
}

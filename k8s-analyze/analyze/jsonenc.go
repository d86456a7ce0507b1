package analyze

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
)

// enc appends a Node as json.MarshalIndent(node, prefix, "  ") would, the
// prefix being margin spaces, without reflection: the report of a big
// cluster is mostly PodVerdicts, and encoding/json spends most of its time
// finding out what they are. TestWriteJSONIsDocumentEncode holds the output
// to encoding/json's, byte for byte.
type enc struct {
	b      []byte
	margin int
}

// lineStart is a newline and the indentation of most lines.
const lineStart = "\n                                                                "

// newline starts a line at depth.
func (e *enc) newline(depth int) {
	n := 1 + e.margin + 2*depth
	if n <= len(lineStart) {
		e.b = append(e.b, lineStart[:n]...)
		return
	}
	e.b = append(e.b, lineStart...)
	for range n - len(lineStart) {
		e.b = append(e.b, ' ')
	}
}

// obj writes the members of one JSON object.
type obj struct {
	e     *enc
	depth int
	n     int
}

func (e *enc) object(depth int) obj {
	e.b = append(e.b, '{')
	return obj{e: e, depth: depth}
}

func (o *obj) key(k string) *enc {
	if o.n > 0 {
		o.e.b = append(o.e.b, ',')
	}
	o.n++
	o.e.newline(o.depth + 1)
	o.e.b = append(o.e.b, '"')
	o.e.b = append(o.e.b, k...)
	o.e.b = append(o.e.b, `": `...)
	return o.e
}

func (o *obj) str(k, v string)          { o.key(k).str(v) }
func (o *obj) num(k string, v int)      { o.key(k).b = strconv.AppendInt(o.e.b, int64(v), 10) }
func (o *obj) boolean(k string, v bool) { o.key(k).b = strconv.AppendBool(o.e.b, v) }

func (o *obj) close() {
	if o.n > 0 {
		o.e.newline(o.depth)
	}
	o.e.b = append(o.e.b, '}')
}

// array writes a JSON array of n elements, each by elem at depth+1.
func (e *enc) array(depth, n int, elem func(i, depth int)) {
	if n == 0 {
		e.b = append(e.b, "[]"...)
		return
	}
	e.b = append(e.b, '[')
	for i := range n {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.newline(depth + 1)
		elem(i, depth+1)
	}
	e.newline(depth)
	e.b = append(e.b, ']')
}

// str appends s as encoding/json does; strings that need no escaping (the
// usual case) are copied as they are.
func (e *enc) str(s string) {
	i := 0
	for ; i+8 <= len(s) && plainWord(s[i:]); i += 8 {
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			q, _ := json.Marshal(s)
			e.b = append(e.b, q...)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

func (e *enc) node(n *Node, depth int) {
	o := e.object(depth)
	o.str("name", n.Name)
	o.str("uid", string(n.UID))
	o.str("risk", string(n.Risk))
	c := o.key("counts").object(depth + 1)
	c.num("pods", n.Counts.Pods)
	c.num("evict", n.Counts.Evict)
	c.num("skip", n.Counts.Skip)
	c.num("block", n.Counts.Block)
	c.num("high", n.Counts.High)
	c.num("medium", n.Counts.Medium)
	c.num("low", n.Counts.Low)
	c.close()
	e.list(&o, "findings", n.Findings == nil, len(n.Findings), func(i, d int) { e.finding(&n.Findings[i], d) })
	e.list(&o, "pods", n.Pods == nil, len(n.Pods), func(i, d int) { e.pod(&n.Pods[i], d) })
	e.list(&o, "pdbs", n.PDBs == nil, len(n.PDBs), func(i, d int) { e.budget(&n.PDBs[i], d) })
	o.close()
}

// list writes member k as an array (null when isNil).
func (e *enc) list(o *obj, k string, isNil bool, n int, elem func(i, depth int)) {
	o.key(k)
	if isNil {
		e.b = append(e.b, "null"...)
		return
	}
	e.array(o.depth+1, n, elem)
}

func (e *enc) finding(f *Finding, depth int) {
	o := e.object(depth)
	o.str("code", string(f.Code))
	o.str("severity", string(f.Severity))
	s := o.key("subject").object(depth + 1)
	s.str("kind", f.Subject.Kind)
	if f.Subject.Namespace != "" {
		s.str("namespace", f.Subject.Namespace)
	}
	s.str("name", f.Subject.Name)
	if f.Subject.UID != "" {
		s.str("uid", string(f.Subject.UID))
	}
	s.close()
	o.str("message", f.Message)
	if len(f.Evidence) > 0 {
		keys := make([]string, 0, len(f.Evidence))
		for k := range f.Evidence {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		m := o.key("evidence").object(depth + 1)
		for _, k := range keys {
			m.key("")
			// key("") wrote `"": `; replace it with the escaped key.
			e.b = e.b[:len(e.b)-len(`"": `)]
			e.str(k)
			e.b = append(e.b, ": "...)
			e.str(f.Evidence[k])
		}
		m.close()
	}
	o.str("fix", f.Fix)
	o.close()
}

func (e *enc) pod(v *PodVerdict, depth int) {
	o := e.object(depth)
	o.str("namespace", v.Namespace)
	o.str("name", v.Name)
	o.str("uid", string(v.UID))
	o.str("action", string(v.Action))
	if len(v.Reasons) > 0 {
		o.key("reasons")
		e.array(depth+1, len(v.Reasons), func(i, _ int) { e.str(string(v.Reasons[i])) })
	}
	if len(v.Owners) > 0 {
		o.key("owners")
		e.array(depth+1, len(v.Owners), func(i, d int) {
			h := &v.Owners[i]
			ho := e.object(d)
			ho.str("kind", h.Kind)
			ho.str("name", h.Name)
			ho.str("uid", string(h.UID))
			ho.boolean("verified", h.Verified)
			if h.Problem != "" {
				ho.str("problem", h.Problem)
			}
			ho.close()
		})
	}
	if len(v.PDBs) > 0 {
		o.key("pdbs")
		e.array(depth+1, len(v.PDBs), func(i, d int) {
			r := &v.PDBs[i]
			ro := e.object(d)
			ro.str("namespace", r.Namespace)
			ro.str("name", r.Name)
			ro.str("uid", string(r.UID))
			ro.close()
		})
	}
	p := &v.EvictableNow
	po := o.key("evictableNow").object(depth + 1)
	po.boolean("allowed", p.Allowed)
	po.str("outcome", p.Outcome)
	po.num("httpStatus", p.HTTPStatus)
	po.str("rule", p.Rule)
	if p.PDB != "" {
		po.str("pdb", p.PDB)
	}
	if p.UsesBudget {
		po.boolean("usesBudget", true)
	}
	if p.Message != "" {
		po.str("message", p.Message)
	}
	po.close()
	o.close()
}

func (e *enc) budget(b *PDBBudget, depth int) {
	o := e.object(depth)
	o.str("namespace", b.Namespace)
	o.str("name", b.Name)
	o.str("uid", string(b.UID))
	o.num("disruptionsAllowed", int(b.DisruptionsAllowed))
	o.num("currentHealthy", int(b.CurrentHealthy))
	o.num("desiredHealthy", int(b.DesiredHealthy))
	o.num("expectedPods", int(b.ExpectedPods))
	o.num("podsOnNode", b.PodsOnNode)
	o.num("podsUsingBudget", b.PodsUsingBudget)
	if b.RoundsNeeded != nil {
		o.num("roundsNeeded", *b.RoundsNeeded)
	}
	o.close()
}

// plainWord reports whether none of the first 8 bytes of s needs escaping
// (a control character, a quote, a backslash, <, >, & or a non-ASCII
// byte), testing them as one word.
func plainWord(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w := binary.LittleEndian.Uint64([]byte(s[:8]))
	has := func(b byte) uint64 {
		x := w ^ (ones * uint64(b))
		return (x - ones) &^ x & highs
	}
	less := (w - ones*0x20) &^ w & highs
	return w&highs|less|has('"')|has('\\')|has('<')|has('>')|has('&') == 0
}

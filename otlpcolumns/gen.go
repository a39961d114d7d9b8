package otlpcolumns

//go:generate go test -run ^TestGeneratedUpToDate$ -update .

// The generated walks (walk_gen.go, written by gen_test.go from the
// schemas): a function per node, its fields' kinds and columns constants,
// that rebuilds the fields the schema names with one-byte tags as
// Decoder.interp does, and hands the rest of the message to interp
// (walkFrom) at any other tag. interp reads each field's op from the
// node's table and branches on its wire type, kind and flags; the
// generated walk jumps on the tag to the field's code. A field's code
// starts with a fast path for its usual value (a sub-message of a one- or
// two-byte length, a string of up to 127 bytes, a one-byte varint or
// time difference, a fixed-size value) when the output has room for the
// tag and the value: one test of the room, no error possible; any other
// value takes the general path behind it, interp's sequence of writes,
// charges and errors (session 13: 9-13 % fewer instructions an item,
// bench/results/session13-colfast-callgrind.txt). A walk whose fields use
// no frame (walkFrame) starts none. A change that
// leaves walk_gen.go not compiling (a Decoder field it uses renamed) is
// generated from a walk_gen.go of the two tables alone, empty:
//
//	var genWalks = [Profiles][]genWalk{}
//	var genColumns = [Profiles]int{}

// genWalk is a node's generated walk: it rebuilds the fields of a message
// of node n from st, the rest of the structure, appending to out, and
// returns what is left of the structure and the output (passed in
// registers: kept in the Decoder, d.st and d.out, as interp keeps them,
// they were stored and reloaded at every sub-message, with the garbage
// collector's write barrier while it marks). On an error, the output is
// what interp's would be.
type genWalk func(d *Decoder, n *node, depth int, st string, out []byte) (string, []byte, error)

// nodesOf returns the nodes of the tree under root, each once, in the
// order the generator numbers them: a node, then its fields' children by
// number, then its byCtx nodes.
func nodesOf(root *node) []*node {
	var out []*node
	seen := map[*node]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for i := range n.f {
			visit(n.f[i].child)
		}
		if n.byCtx != nil {
			for _, c := range n.byCtx {
				visit(c)
			}
		}
	}
	visit(root)
	return out
}

// installGen gives each node of sig's schema its generated walk, unless
// the generated file numbers another tree (a schema changed and not
// generated again: TestGeneratedUpToDate fails, and interp walks).
func installGen(s *schema, sig Signal) {
	walks := genWalks[sig]
	nodes := nodesOf(s.root)
	if len(walks) != len(nodes) || genColumns[sig] != s.cols {
		return
	}
	for i, n := range nodes {
		n.gen = walks[i]
	}
}

package report

import (
	"strings"

	"golang.org/x/net/html"
)

// The helpers the HTML report is built with. A page is a tree of
// golang.org/x/net/html nodes written by html.Render, which escapes every
// text node and attribute value as it writes it: a string from a results
// file can only ever become text, never markup. The one way around that is
// raw, kept for constant markup this package authors (the style sheet).

// A part is what an element is made of: an attribute or child nodes.
type part interface{ addTo(parent *html.Node) }

// node is one child node; a nil node adds nothing, so optional children can
// be written inline.
type node struct{ n *html.Node }

func (c node) addTo(p *html.Node) {
	if c.n != nil {
		p.AppendChild(c.n)
	}
}

// attribute is one attribute; one with no key adds nothing.
type attribute html.Attribute

func (a attribute) addTo(p *html.Node) {
	if a.Key != "" {
		p.Attr = append(p.Attr, html.Attribute(a))
	}
}

// group is a run of parts, such as the rows a loop builds.
type group []part

func (g group) addTo(p *html.Node) {
	for _, x := range g {
		if x != nil {
			x.addTo(p)
		}
	}
}

// el builds the element tag from its parts, in order. A nil part is skipped.
func el(tag string, parts ...part) node {
	n := &html.Node{Type: html.ElementNode, Data: tag}
	group(parts).addTo(n)
	return node{n}
}

// block is el for an element whose children each go on a line of their
// own, so the page's source stays readable: a line break after the start
// tag and after every child element.
func block(tag string, parts ...part) node {
	b := el(tag, parts...)
	b.n.InsertBefore(newline(), b.n.FirstChild)
	for c := b.n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			b.n.InsertBefore(newline(), c.NextSibling)
		}
	}
	return b
}

// lines puts each part on a line of its own: table rows, list items.
func lines(parts ...part) group {
	g := make(group, 0, 2*len(parts))
	for _, p := range parts {
		g = append(g, p, node{newline()})
	}
	return g
}

func newline() *html.Node { return &html.Node{Type: html.TextNode, Data: "\n"} }

// txt is a text node (junit.go has text): html.Render escapes it.
func txt(s string) node {
	return node{&html.Node{Type: html.TextNode, Data: clean(s)}}
}

// attr is an attribute: html.Render escapes its value.
func attr(key, val string) attribute { return attribute{Key: key, Val: clean(val)} }

func class(c string) attribute { return attr("class", c) }

// attrIf is attr when ok, else nothing.
func attrIf(ok bool, key, val string) attribute {
	if !ok {
		return attribute{}
	}
	return attr(key, val)
}

// when is the parts when ok, else nothing. The parts are built either way,
// so a part that would dereference what ok guards belongs in an if.
func when(ok bool, parts ...part) part {
	if !ok {
		return nil
	}
	return group(parts)
}

// raw is markup written as it is, unescaped. Only for constant markup of
// this package: never pass it anything that came from a run.
func raw(markup string) node { return node{&html.Node{Type: html.RawNode, Data: markup}} }

// clean replaces NUL, which html.Render passes through but which is no XML
// character and which a browser drops, with U+FFFD as html/template did.
func clean(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// document is a whole page: the doctype, then root.
func document(root node) *html.Node {
	d := &html.Node{Type: html.DocumentNode}
	d.AppendChild(&html.Node{Type: html.DoctypeNode, Data: "html"})
	d.AppendChild(newline())
	d.AppendChild(root.n)
	d.AppendChild(newline())
	return d
}

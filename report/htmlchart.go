package report

import (
	"fmt"
	"strconv"
)

// The SVG of the charts (charts.go computes their shapes) and of the
// legends' swatches, as nodes: every string in them is an attribute value
// or text that html.Render escapes.

// chartNodes is a chart's <svg> and the note under it.
func chartNodes(c chart) group {
	shapes := make(group, len(c.Shapes))
	for i := range c.Shapes {
		shapes[i] = lines(shapeNode(&c.Shapes[i]))
	}
	svg := el("svg", class("chart "+c.Class), attr("viewBox", fmt.Sprintf("0 0 %d %d", c.W, c.H)),
		attr("role", "img"), attr("aria-label", c.Label), attr("data-points", strconv.Itoa(c.Points)),
		node{newline()}, shapes)
	return group{svg, when(c.Note != "", el("p", class("note"), txt(c.Note)))}
}

// shapeNode is one shape; its geometry attributes depend on its kind.
func shapeNode(s *shape) node {
	var geometry group
	switch s.Kind {
	case "circle":
		geometry = group{attr("cx", s.X), attr("cy", s.Y), attr("r", s.R)}
	case "rect":
		geometry = group{attr("x", s.X), attr("y", s.Y), attr("width", s.W), attr("height", s.H)}
	case "path":
		geometry = group{attr("d", s.D)}
	case "line":
		geometry = group{attr("x1", s.X), attr("y1", s.Y), attr("x2", s.X2), attr("y2", s.Y2)}
	case "text":
		return el("text", class(s.Class), attr("x", s.X), attr("y", s.Y), attrIf(s.Anchor != "", "text-anchor", s.Anchor), txt(s.Text))
	default:
		return node{}
	}
	// Only the request points (circle, rect, path) carry an id and a seq.
	point := s.Kind != "line"
	return el(s.Kind, attrIf(point && s.ID != "", "id", s.ID), class(s.Class), geometry,
		attrIf(point && s.Seq != 0, "data-seq", strconv.Itoa(s.Seq)), attrIf(point && s.Seq != 0, "data-outcome", s.Outcome),
		when(s.Title != "", el("title", txt(s.Title))))
}

// Legend swatches: the small icons of the legends, each drawn as the
// shape it names in the chart.
const (
	swatchW     = 12 // a point's swatch: a 12×12 box
	swatchWideW = 22 // a line's swatch is wider, to read as a line
)

// swatch is an inline svg holding one shape.
func swatch(w int, shape string, parts ...part) node {
	box := fmt.Sprintf("0 0 %d %d", w, swatchW)
	return el("svg", attr("width", strconv.Itoa(w)), attr("height", strconv.Itoa(swatchW)), attr("viewBox", box), el(shape, parts...))
}

// legendItem is one entry: a swatch, then what it stands for.
func legendItem(sw node, label string) node { return el("span", sw, txt(label)) }

func timelineLegend(r *pageRun) node {
	c := r.Counts
	return block("div", class("legend"),
		legendItem(swatch(swatchW, "circle", attr("cx", "6"), attr("cy", "6"), attr("r", "4"), class("p-admitted")), fmt.Sprintf("admitted (%d)", c.Admitted)),
		legendItem(swatch(swatchW, "rect", attr("x", "2"), attr("y", "2"), attr("width", "8"), attr("height", "8"), class("p-rejected")), fmt.Sprintf("rejected (%d)", c.Rejected)),
		legendItem(swatch(swatchW, "path", attr("d", "M6 1L11 10L1 10Z"), class("p-error")), fmt.Sprintf("transport error (%d)", c.Errors)),
		when(c.Other != 0, legendItem(swatch(swatchW, "path", attr("d", "M6 1L11 6L6 11L1 6Z"), class("p-other")), fmt.Sprintf("other status (%d)", c.Other))),
		legendItem(swatch(swatchWideW, "line", attr("x1", "2"), attr("y1", "6"), attr("x2", "20"), attr("y2", "6"), class("wait w-admitted")), "wait from send to first byte"),
		el("span", txt("y: requests in send order, grouped by phase")))
}

func intervalsLegend(r *pageRun) node {
	bar := func(c string) node {
		return swatch(swatchW, "rect", attr("x", "1"), attr("y", "1"), attr("width", "10"), attr("height", "10"), class(c))
	}
	return block("div", class("legend"),
		legendItem(bar("b-admitted"), "admitted"),
		legendItem(bar("b-rejected"), "rejected"),
		when(r.Inference != nil,
			legendItem(swatch(swatchWideW, "path", attr("d", "M1 9H8V3H21"), class("model")), "inferred model's admissions"),
			legendItem(swatch(swatchWideW, "line", attr("x1", "1"), attr("y1", "6"), attr("x2", "21"), attr("y2", "6"), class("capacity")), "sustained capacity")))
}

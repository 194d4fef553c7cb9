package open5e

import (
	"fmt"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// NoticeDocuments is the NOTICE file's list of documents, from their
// records: each v2 document with its publisher, game system, licences and
// the notice its licence asks for (the OGL section 15 text of its v1 twin,
// the SRD's CC-BY-4.0 attribution), and where its records disagree about
// the licence, what each says; then each v1 document with its licence, its
// twin and its notice.
func (c *Catalog) NoticeDocuments() string {
	var b strings.Builder
	section := func(title string) {
		fmt.Fprintf(&b, "%s\n%s\n", title, strings.Repeat("-", len(title)))
	}
	section("Documents in the snapshot (Open5e API v2)")
	for _, d := range c.Documents() {
		if d.GetSource() != lkv1.Source_SOURCE_OPEN5E_V2 {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s (%s; game system %s). Licence: %s. %s\n", d.GetKey(), d.GetName(),
			d.GetPublisher(), d.GetGameSystem(), orNone(d.GetLicenses()), d.GetPermalink())
		if n := d.GetLicenseNote(); n != "" {
			b.WriteString(wrap("The records disagree about the licence: "+n+".", "    "))
		}
		if a := d.GetAttribution(); a != "" {
			b.WriteString(wrap(a, "    "))
		}
	}
	b.WriteString("\n")
	section("Documents in the snapshot (Open5e API v1), with their OGL section 15 notices")
	for _, d := range c.Documents() {
		if d.GetSource() != lkv1.Source_SOURCE_OPEN5E_V1 {
			continue
		}
		twin := "no v2 twin"
		if t := c.V2Twins(d.GetKey()); len(t) > 0 {
			twin = "v1 copy of v2 " + t[0]
		}
		fmt.Fprintf(&b, "- %s: %s (%s). Licence: %s.\n", d.GetKey(), d.GetName(), twin, orNone(d.GetLicenses()))
		if a := d.GetAttribution(); a != "" {
			b.WriteString(wrap(a, "    "))
		}
	}
	return b.String()
}

func orNone(ls []string) string {
	if len(ls) == 0 {
		return "none stated"
	}
	return strings.Join(ls, ", ")
}

// wrap breaks s into lines of at most 80 columns, each indented.
func wrap(s, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > 80 {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

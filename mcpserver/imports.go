package mcpserver

import (
	"context"
	"fmt"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// importProblems are the OrcBrew files whose last import failed or was
// partial, as the query node reads them from its ingest state; nil when
// there are none or the state cannot be read (the answer goes on without).
func (s *Server) importProblems(ctx context.Context) []ImportProblem {
	st, err := s.client.Status(ctx, &lkv1.StatusRequest{})
	if err != nil {
		s.log.Debug("import state unavailable", "err", err)
		return nil
	}
	var out []ImportProblem
	if p := st.GetIngestState().GetStoreProblem(); p != "" {
		// Every import fails until the store takes writes again.
		out = append(out, ImportProblem{File: "(every file)", Status: "failed", Error: p})
	}
	for _, is := range st.GetIngestState().GetOrcbrew() {
		p := ImportProblem{File: is.GetObject(), Error: is.GetError()}
		switch is.GetStatus() {
		case lkv1.ImportState_STATUS_FAILED:
			p.Status = "failed"
		case lkv1.ImportState_STATUS_PARTIAL:
			p.Status = "partial"
			ws := is.GetWarnings()
			if len(ws) > 3 {
				ws = append(ws[:3:3], fmt.Sprintf("and %d more", len(ws)-3))
			}
			p.Error = strings.Join(ws, "; ")
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// renderImportProblems is the text of import problems, "" when none.
func renderImportProblems(ps []ImportProblem) string {
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nOrcBrew files with problems (fix the file and save it again):\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "- %s: %s: %s\n", p.File, p.Status, p.Error)
	}
	return b.String()
}

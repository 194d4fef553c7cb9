package open5esnapshot

// Unpacked reports whether h holds its pages.
func (h *Handler) Unpacked() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.p != nil
}

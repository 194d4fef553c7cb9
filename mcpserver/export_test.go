package mcpserver

import (
	"context"
	"time"
)

// EncounterBudget is encounterBudget, for the black-box tests.
var EncounterBudget = encounterBudget

// ParseLevels is parseLevels, for the fuzz test.
var ParseLevels = parseLevels

// SyncDocuments is syncDocuments, for the black-box tests.
func (s *Server) SyncDocuments(ctx context.Context, hold time.Duration) error {
	return s.syncDocuments(ctx, hold)
}

// DocumentResources is how many document resources s has registered.
func (s *Server) DocumentResources() int {
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	return len(s.docs.current)
}

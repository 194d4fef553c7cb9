package query_test
import ("testing";"fmt";"lorekeeper.dev/embedder")
func TestZZDebug(t *testing.T){ snapshotStore(t); for _,e:=range snap.entities{ d:=e.GetDocument().GetKey(); if d!="srd-2014" {continue}; switch e.GetName(){case "Troll","Owlbear","Wolf","Plate","Ancient Red Dragon","Greater Invisibility","Invisibility","Healing Word": fmt.Printf("%s | %q\n\n", e.GetKey(), embedder.Text(e,true)); fmt.Println(len(e.GetBlocks()), e.GetDescription()[:min(100,len(e.GetDescription()))])}}}

package open5esnapshot

// Notice is the attribution the bundled snapshot's licences require. Show it
// wherever the snapshot's content is redistributed (the binary's NOTICE
// output, the README, an MCP server's about text).
const Notice = `LoreKeeper bundles an offline copy of the Open5e API (https://open5e.com),
produced by running the open5e-api project's own code (github.com/open5e/open5e-api,
main 4b314adb) over its data: every document the API serves, 24 in v2 and
their 17 older v1 copies. It contains material from these documents (NOTICE
lists each with its licences and its OGL Section 15 notice):

  - System Reference Document 5.1 and 5.2, Wizards of the Coast LLC:
    CC-BY-4.0 (SRD 5.1 also under the OGL 1.0a).
  - 5e Core Concepts, Open5e: CC-BY-4.0 and OGL 1.0a; Open5e Originals: OGL 1.0a.
  - Kobold Press: Tome of Beasts (2016 and 2023 editions), Tome of Beasts 2
    and 3, Creature Codex, Deep Magic for 5th Edition, Deep Magic Extended,
    Vault of Magic, Tome of Heroes, Warlock Zine, Kobold Press Compilation:
    OGL 1.0a. Black Flag SRD: CC-BY-4.0 by its v2 record, the ORC License by
    its v1 record.
  - EN Publishing, Level Up Advanced 5th Edition (game system a5e): the
    Adventurer's Guide, Dungeon Delver's Guide and Gate Pass Gazette,
    CC-BY-4.0 and OGL 1.0a; the Monstrous Menagerie, OGL 1.0a.
  - Green Ronin Publishing, Tal'Dorei Campaign Setting: OGL 1.0a.
  - Somanyrobots, Spells That Don't Suck: CC-BY-4.0.
  - Elderberry Inn Icons (image metadata only): CC0.

This work includes material taken from the System Reference Document 5.1
("SRD 5.1") and the System Reference Document 5.2 ("SRD 5.2") by Wizards of
the Coast LLC, available at
https://dnd.wizards.com/resources/systems-reference-document, licensed under
the Creative Commons Attribution 4.0 International License
(https://creativecommons.org/licenses/by/4.0/legalcode).

Open Game Content is used under the Open Game License 1.0a. The full OGL 1.0a,
CC-BY-4.0 and CC0 texts are served by the snapshot at /v2/licenses/, and the
OGL Section 15 notice of each document is the "copyright" field of its record
at /v1/documents/. Upstream images (CC-BY-NC-4.0) are not included; only their
metadata and URLs are.`

// Package srddb is a second, independent transcription of the System
// Reference Document 5.1: the 5e-bits project's 5e-database (the data
// behind the public 5e SRD API), embedded. Open5e's SRD 5.1 records carry
// transcription errors that no check inside one source can see (the
// Wight's resistances filed as immunities, Spike Growth's garbled text);
// comparing every field with a second transcription finds them, and where
// the two disagree the SRD's own text decides. Neither source is the truth
// alone.
package srddb

import (
	"archive/tar"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/klauspost/compress/zstd"
)

// tarball is the English SRD 5.1 files of 5e-database (src/2014/en at
// commit bfd3db4bcc31699cce703b46feb9af3f0ff08999, 2026-08-17) and its
// licence, tarred and compressed with zstd (`make srddb`): 3 MB of JSON
// in 228 KB.
//
//go:embed 5e-database-2014.tar.zst
var tarball []byte

// DB is the transcription, each kind by its index (the slug Open5e uses
// for most SRD 5.1 entities: "wight", "spike-growth").
type DB struct {
	Monsters   map[string]*Monster
	Spells     map[string]*Spell
	MagicItems map[string]*MagicItem
	Equipment  map[string]*Equipment
	Conditions map[string]*Condition
	Classes    map[string]*Class
	// Levels are each class's levels 1-20 (no subclass levels), by class
	// index.
	Levels map[string][]*Level
	// License is the project's licence (MIT); the content is the SRD's.
	License string
}

// Ref is a reference to another record: its index and name.
type Ref struct {
	Index string `json:"index"`
	Name  string `json:"name"`
}

// Monster is a stat block.
type Monster struct {
	Index      string `json:"index"`
	Name       string `json:"name"`
	Size       string `json:"size"`
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	Alignment  string `json:"alignment"`
	ArmorClass []struct {
		Type  string `json:"type"`
		Value int    `json:"value"`
	} `json:"armor_class"`
	HitPoints     int            `json:"hit_points"`
	HitDice       string         `json:"hit_dice"`
	HitPointsRoll string         `json:"hit_points_roll"`
	Speed         map[string]any `json:"speed"`
	Strength      int            `json:"strength"`
	Dexterity     int            `json:"dexterity"`
	Constitution  int            `json:"constitution"`
	Intelligence  int            `json:"intelligence"`
	Wisdom        int            `json:"wisdom"`
	Charisma      int            `json:"charisma"`
	Proficiencies []struct {
		Value       int `json:"value"`
		Proficiency Ref `json:"proficiency"`
	} `json:"proficiencies"`
	DamageVulnerabilities []string       `json:"damage_vulnerabilities"`
	DamageResistances     []string       `json:"damage_resistances"`
	DamageImmunities      []string       `json:"damage_immunities"`
	ConditionImmunities   []Ref          `json:"condition_immunities"`
	Senses                map[string]any `json:"senses"`
	Languages             string         `json:"languages"`
	ChallengeRating       float64        `json:"challenge_rating"`
	XP                    int            `json:"xp"`
	SpecialAbilities      []*Action      `json:"special_abilities"`
	Actions               []*Action      `json:"actions"`
	Reactions             []*Action      `json:"reactions"`
	LegendaryActions      []*Action      `json:"legendary_actions"`
}

// Action is a trait or an action of a stat block.
type Action struct {
	Name        string    `json:"name"`
	Desc        string    `json:"desc"`
	AttackBonus *int      `json:"attack_bonus"`
	Damage      []*Damage `json:"damage"`
	DC          *DC       `json:"dc"`
}

// Damage is a damage roll and its type.
type Damage struct {
	DamageType Ref    `json:"damage_type"`
	DamageDice string `json:"damage_dice"`
}

// DC is a saving throw.
type DC struct {
	Type  Ref `json:"dc_type"`
	Value int `json:"dc_value"`
}

// Spell is a spell.
type Spell struct {
	Index         string   `json:"index"`
	Name          string   `json:"name"`
	Desc          []string `json:"desc"`
	HigherLevel   []string `json:"higher_level"`
	Range         string   `json:"range"`
	Components    []string `json:"components"`
	Material      string   `json:"material"`
	Ritual        bool     `json:"ritual"`
	Duration      string   `json:"duration"`
	Concentration bool     `json:"concentration"`
	CastingTime   string   `json:"casting_time"`
	Level         int      `json:"level"`
	AttackType    string   `json:"attack_type"`
	Damage        *struct {
		DamageType Ref `json:"damage_type"`
	} `json:"damage"`
	DC *struct {
		Type Ref `json:"dc_type"`
	} `json:"dc"`
	School     Ref   `json:"school"`
	Classes    []Ref `json:"classes"`
	Subclasses []Ref `json:"subclasses"`
}

// MagicItem is a magic item; its first line of desc says what it is, its
// rarity and attunement ("Weapon (any sword), rare (requires attunement)").
type MagicItem struct {
	Index             string   `json:"index"`
	Name              string   `json:"name"`
	EquipmentCategory Ref      `json:"equipment_category"`
	Rarity            Ref      `json:"rarity"`
	Variant           bool     `json:"variant"`
	Variants          []Ref    `json:"variants"`
	Desc              []string `json:"desc"`
}

// Equipment is a weapon, armor, or piece of gear.
type Equipment struct {
	Index             string `json:"index"`
	Name              string `json:"name"`
	EquipmentCategory Ref    `json:"equipment_category"`
	WeaponCategory    string `json:"weapon_category"`
	WeaponRange       string `json:"weapon_range"`
	Cost              *struct {
		Quantity float64 `json:"quantity"`
		Unit     string  `json:"unit"`
	} `json:"cost"`
	Damage *struct {
		DamageDice string `json:"damage_dice"`
		DamageType Ref    `json:"damage_type"`
	} `json:"damage"`
	TwoHandedDamage *struct {
		DamageDice string `json:"damage_dice"`
	} `json:"two_handed_damage"`
	Range *struct {
		Normal int `json:"normal"`
		Long   int `json:"long"`
	} `json:"range"`
	ThrowRange *struct {
		Normal int `json:"normal"`
		Long   int `json:"long"`
	} `json:"throw_range"`
	// Quantity is how many the cost and weight are for (20 crossbow
	// bolts); 0 for one.
	Quantity      int     `json:"quantity"`
	Weight        float64 `json:"weight"`
	Properties    []Ref   `json:"properties"`
	ArmorCategory string  `json:"armor_category"`
	ArmorClass    *struct {
		Base     int  `json:"base"`
		DexBonus bool `json:"dex_bonus"`
		MaxBonus *int `json:"max_bonus"`
	} `json:"armor_class"`
	StrMinimum          int      `json:"str_minimum"`
	StealthDisadvantage bool     `json:"stealth_disadvantage"`
	Desc                []string `json:"desc"`
}

// Condition is a condition.
type Condition struct {
	Index string   `json:"index"`
	Name  string   `json:"name"`
	Desc  []string `json:"desc"`
}

// Class is a class.
type Class struct {
	Index        string `json:"index"`
	Name         string `json:"name"`
	HitDie       int    `json:"hit_die"`
	SavingThrows []Ref  `json:"saving_throws"`
}

// Level is a class's level: its proficiency bonus and spell slots.
type Level struct {
	Level        int  `json:"level"`
	Class        Ref  `json:"class"`
	Subclass     *Ref `json:"subclass"`
	ProfBonus    int  `json:"prof_bonus"`
	Spellcasting map[string]int
}

// Load unpacks and reads the embedded transcription.
func Load() (*DB, error) {
	files, err := unpack()
	if err != nil {
		return nil, fmt.Errorf("read srd 5.1 transcription: %w", err)
	}
	db := &DB{License: string(files["LICENSE.md"])}
	var errs []error
	read := func(name string, into any) {
		b, ok := files[name]
		if !ok {
			errs = append(errs, fmt.Errorf("no %s", name))
			return
		}
		if err := json.Unmarshal(b, into); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	var (
		monsters   []*Monster
		spells     []*Spell
		magicItems []*MagicItem
		equipment  []*Equipment
		conditions []*Condition
		classes    []*Class
		levels     []*Level
	)
	read("5e-SRD-Monsters.json", &monsters)
	read("5e-SRD-Spells.json", &spells)
	read("5e-SRD-Magic-Items.json", &magicItems)
	read("5e-SRD-Equipment.json", &equipment)
	read("5e-SRD-Conditions.json", &conditions)
	read("5e-SRD-Classes.json", &classes)
	read("5e-SRD-Levels.json", &levels)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("read srd 5.1 transcription: %w", err)
	}
	db.Monsters = byIndex(monsters, func(m *Monster) string { return m.Index })
	db.Spells = byIndex(spells, func(s *Spell) string { return s.Index })
	db.MagicItems = byIndex(magicItems, func(m *MagicItem) string { return m.Index })
	db.Equipment = byIndex(equipment, func(e *Equipment) string { return e.Index })
	db.Conditions = byIndex(conditions, func(c *Condition) string { return c.Index })
	db.Classes = byIndex(classes, func(c *Class) string { return c.Index })
	db.Levels = map[string][]*Level{}
	for _, l := range levels {
		if l.Subclass == nil {
			db.Levels[l.Class.Index] = append(db.Levels[l.Class.Index], l)
		}
	}
	return db, nil
}

func byIndex[T any](list []T, index func(T) string) map[string]T {
	m := make(map[string]T, len(list))
	for _, x := range list {
		m[index(x)] = x
	}
	return m
}

// unpack is the tarball's files by base name.
func unpack() (map[string][]byte, error) {
	zr, err := zstd.NewReader(bytes.NewReader(tarball), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[path.Base(h.Name)] = b
	}
}

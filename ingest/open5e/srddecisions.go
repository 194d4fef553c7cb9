package open5e

// srdDecisions are the disagreements between Open5e's SRD 5.1 and its
// second transcription (5e-database) that no rule of srdrules.go settles,
// each decided by what the SRD 5.1 prints, by "kind/slug/field" (a
// block's: "kind/slug/field/subject"). Reviewed one by one: a change here
// is a change of what a card says of the book.
var srdDecisions = map[string]srdDecision{
	// Open5e's v1 and v2 records alike.
	"creature/wight/damage_resistances": {side: "srd",
		wording: "Damage Resistances necrotic; bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons"},
	"creature/wight/damage_immunities":    {side: "srd", wording: "Damage Immunities poison"},
	"creature/wight/condition_immunities": {side: "srd", wording: "Condition Immunities exhaustion, poisoned"},
	"creature/zombie/damage_immunities":   {side: "srd", wording: "Damage Immunities poison"},
	"creature/chain-devil/challenge_rating": {side: "srd",
		wording: "Challenge 8 (3,900 XP); its +3 proficiency and passive Perception 11 fit it"},
	"creature/young-blue-dragon/speed": {side: "srd", wording: "Speed 40 ft., burrow 20 ft., fly 80 ft."},
	"creature/priest/skills":           {side: "srd", wording: "Skills Medicine +7, Persuasion +3, Religion +4"},
	"creature/grimlock/senses": {side: "srd",
		wording: "Senses blindsight 30 ft. or 10 ft. while deafened (blind beyond this radius), passive Perception 13 (Open5e's blindsight_range is 3010)"},

	"spell/divination/classes": {side: "value", value: "cleric",
		wording: "Divination on the cleric's spell list (4th level), not the druid's, who has it through the Circle of the Land (Grassland)"},
	"spell/faerie-fire/classes": {side: "value", value: "bard, druid",
		wording: "Faerie Fire on the bard's and the druid's spell lists (1st level)"},
	"spell/plane-shift/classes": {side: "srd", wording: "Plane Shift on the druid's spell list (7th level) too"},

	"spell/legend-lore/material": {side: "srd", fix: []string{
		"Incense worth 250 inches that fate consumes and four sticks of ivory worth 50 gp each",
		"Incense worth at least 250 gp, which the spell consumes, and four ivory strips worth at least 50 gp each"},
		wording: "M (incense worth at least 250 gp, which the spell consumes, and four ivory strips worth at least 50 gp each)"},
	"spell/magic-mouth/material": {side: "open5e",
		wording: "M (a small bit of honeycomb and jade dust worth at least 10 gp, which the spell consumes)"},
	"spell/spike-growth/material": {side: "srd", fix: []string{
		"Seven sharp spines or seven twigs cut peak", "Seven sharp thorns or seven small twigs, each sharpened to a point"},
		wording: "M (seven sharp thorns or seven small twigs, each sharpened to a point)"},

	"spell/spike-growth/text": {side: "srd", fix: []string{
		"The development of land is camouflaged to look natural. Any creature that does not see the area when the spell is spell casts must",
		"The transformation of the ground is camouflaged to look natural. Any creature that can't see the area at the time the spell is cast must"},
		wording: `"The transformation of the ground is camouflaged to look natural. Any creature that can't see the area at the time the spell is cast must make a Wisdom (Perception) check"`},
	"spell/control-water/text": {side: "srd", fix: []string{
		"onto dry land. instead create", "onto dry land. If you choose an area in a large body of water, you instead create"},
		wording: `"If you choose an area in a large body of water, you instead create a 20-foot tall wave"`},
	"spell/disguise-self/text": {side: "srd", fix: []string{"apperance", "appearance"}, wording: `"to inspect your appearance"`},
	"spell/divine-word/text": {side: "srd", fix: []string{
		"50hp or less:", "50 hit points or fewer:", "40 hp or less:", "40 hit points or fewer:",
		"30 hp or less: blinded, deafened and dazed", "30 hit points or fewer: blinded, deafened, and stunned",
		"20 hp or less:", "20 hit points or fewer:"},
		wording: `"30 hit points or fewer: blinded, deafened, and stunned for 1 hour" (no "dazed" condition)`},
	"spell/mirror-image/text": {side: "srd", fix: []string{
		"Three illusionary duplicates", "Three illusory duplicates", "roll a d20 to determine  roll a d20 to determine", "roll a d20 to determine"},
		wording: `"Three illusory duplicates of yourself appear in your space", "roll a d20 to determine whether the attack instead targets one of your duplicates"`},
	"spell/unseen-servant/text": {side: "srd", fix: []string{"pouring wind", "pouring wine"}, wording: `"serving food, and pouring wine"`},
	"spell/wall-of-fire/text": {side: "srd", fix: []string{
		"The other side o f the wall deals no damage. The other side of the wall deals no damage.", "The other side of the wall deals no damage.",
		"t o f that side", "t of that side",
		"When you cast this spell using a level spell slot 5 or more, the damage of the spell increases by 1d8 for each level of higher spell slot to 4.",
		"When you cast this spell using a spell slot of 5th level or higher, the damage increases by 1d8 for each slot level above 4th."},
		wording: `"The other side of the wall deals no damage." and "When you cast this spell using a spell slot of 5th level or higher, the damage increases by 1d8 for each slot level above 4th."`},
	"spell/wish/text": {side: "srd", fix: []string{
		"You grant up to ten creatures you can see resistance", "You grant up to ten creatures that you can see resistance"},
		wording: `"You grant up to ten creatures that you can see resistance to a damage type you choose"`},
	"spell/zone-of-truth/text": {side: "srd", fix: []string{
		"An affected creature is aware of the fate and can avoid answering questions she would normally have responded with a lie. Such a creature can remain evasive in his answers as they remain within the limits of truth.",
		"An affected creature is aware of the spell and can thus avoid answering questions to which it would normally respond with a lie. Such a creature can be evasive in its answers as long as it remains within the boundaries of the truth."},
		wording: `"An affected creature is aware of the spell and can thus avoid answering questions to which it would normally respond with a lie."`},
	// The transcription's wording is not the SRD's; Open5e's is.
	"spell/animal-friendship/text": {side: "open5e", wording: `its At Higher Levels: "you can affect one additional beast for each slot level above 1st"`},
	"spell/compulsion/text":        {side: "open5e", wording: `"it can take its action before it moves ... another Wisdom saving throw ... such as a fire or pit"`},
	"spell/conjure-animals/text":   {side: "open5e", wording: `"and four times as many with a 9th-level slot"`},
	"spell/dominate-beast/text": {side: "open5e",
		wording: `"You attempt to beguile a beast that you can see within range" (the transcription gives Dominate Monster's text)`},
	"spell/druidcraft/text":    {side: "open5e", wording: `"You instantly make a flower blossom ... the faint odor of skunk"`},
	"spell/find-familiar/text": {side: "open5e", wording: `"you use your attack modifier for the roll"`},
	"spell/goodberry/text":     {side: "open5e", wording: `"to sustain a creature for one day"`},
	"spell/hold-monster/text":  {side: "open5e", wording: `"Choose a creature that you can see within range"`},
	"spell/magic-circle/text":  {side: "open5e", wording: `"Glowing runes appear wherever the cylinder intersects with the floor"`},
	"spell/magic-mouth/text":   {side: "open5e", wording: `"You implant a message within an object in range"`},
	"spell/moonbeam/text":      {side: "open5e", wording: `"the damage increases by 1d10 for each slot level above 2nd"`},
	"spell/shatter/text":       {side: "open5e", wording: `"A nonmagical object that isn't being worn or carried also takes the damage"`},
	"spell/true-polymorph/text": {side: "open5e",
		wording: `"the transformation lasts until it is dispelled. This spell has no effect on a shapechanger or a creature with 0 hit points."`},
	"spell/glyph-of-warding/duration": {side: "open5e", wording: "Duration: Until dispelled or triggered"},
	"spell/symbol/duration":           {side: "open5e", wording: "Duration: Until dispelled or triggered"},

	"magic-item/figurine-of-wondrous-power-ebony-fly/attunement": {side: "srd",
		wording: "Figurine of Wondrous Power: Wondrous item, rarity by figurine (no attunement)"},
	"magic-item/horn-of-valhalla-silver/attunement": {side: "srd", wording: "Horn of Valhalla: Wondrous item, rarity varies (no attunement)"},
	"magic-item/wings-of-flying/text": {side: "srd", cut: "## Sentient Magic Items",
		wording: `Wings of Flying ending "you can't use them again for 1d12 hours" (Open5e runs the next section, Sentient Magic Items, into it)`},
	"magic-item/bag-of-tricks/text": {side: "open5e",
		wording: `"The creature is friendly to you and your companions, and it acts on your turn."`},
	"magic-item/belt-of-dwarvenkind/text":          {side: "open5e", wording: `"You have darkvision out to a range of 60 feet."`},
	"magic-item/spell-scroll-cantrip/text":         {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-1st-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-2nd-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-3rd-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-4th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-5th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-6th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-7th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-8th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/spell-scroll-9th-level/text":       {side: "open5e", wording: spellScroll},
	"magic-item/crystal-ball-of-mind-reading/text": {side: "open5e", wording: variantText},
	"magic-item/crystal-ball-of-telepathy/text":    {side: "open5e", wording: variantText},
	"magic-item/crystal-ball-of-true-seeing/text":  {side: "open5e", wording: variantText},
	"magic-item/horn-of-valhalla-brass/text":       {side: "open5e", wording: variantText},
	"magic-item/horn-of-valhalla-bronze/text":      {side: "open5e", wording: variantText},
	"magic-item/horn-of-valhalla-iron/text":        {side: "open5e", wording: variantText},
	"magic-item/wand-of-the-war-mage-1/text":       {side: "open5e", wording: `"you gain a bonus to spell attack rolls determined by the wand's rarity"`},
	"magic-item/wand-of-the-war-mage-2/text":       {side: "open5e", wording: `"you gain a bonus to spell attack rolls determined by the wand's rarity"`},
	"magic-item/wand-of-the-war-mage-3/text":       {side: "open5e", wording: `"you gain a bonus to spell attack rolls determined by the wand's rarity"`},

	"item/spike-iron/weight": {side: "open5e", wording: "Spikes, iron (10): 1 gp, 5 lb.: half a pound a spike, as Open5e prices it a spike"},
}

// Wordings several decisions share.
const (
	spellScroll = `"you can use an action to read the scroll and cast its spell without having to provide any of the spell's components" (the transcription's is SRD 5.2's wording)`
	variantText = `the item's text, its variants' table and the variant's own paragraph: Open5e gives each variant the item's text, the transcription each variant its own part`
)

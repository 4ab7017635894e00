"""Names and words. Tables are sorted so they are identical in every process."""

from __future__ import annotations

_HEADS = (
    "al an ar as bal bel bor bran bren cal cas cor dal dar del dor dren el em en fal fen fin gal gar gil "
    "gor hal har hel hol is jor jas kal kel kor lan lor lys mal mar mer mor nal nev nor or os pal per "
    "quen ral ren ros sal sel sor tal tam tor tes ul val var ven vor wen wil yar yel zan zel thal brin "
    "cav drel fir gwyn hask ives"
).split()
_MIDS = ("", "a", "e", "i", "o", "ra", "li", "ve", "do", "ma", "ne", "sa", "ri")
_MIDS2 = ("", "ra", "li", "ve", "do", "ma", "ne", "sa", "ri", "to", "ber", "len")
# ~12,000 stems; a name is a stem plus a tail of its kind, so each kind has ~350,000 names. That many
# are needed: a town follows "in" or "near" in a large share of 30,000 items, and the bigram
# ("in", town) is new only while towns rarely repeat.
_STEMS = tuple(sorted({(h + m + m2).capitalize() for h in _HEADS for m in _MIDS for m2 in _MIDS2}))


def _table(tails: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return _STEMS, tuple(tails.split())


_GIVEN = _table("a ia in en on el is an ric wyn ette ius o eth ine ay ith us ora iel ard ek ice ela ando esse ian ey")
_SURNAMES = _table(
    "ley son wick ard ell ton ner ridge more ovic ani berg holt well by mont stone ski field ham worth "
    "combe lock shaw quist ez ini ault ing den"
)
_TOWNS = _table(
    "ford wick holm dale by stead mere port ton burg ville haven bridge field moor gate cross wood "
    "minster thorpe ness ley fell mouth hollow reach brook combe garth wold"
)
_RIVERS = _table("ra on et ine wy ash ell und isa or ane ey ath orn ia uin")
_LANDS = _table("ia land mark ovia ara eth istan onia")

_COMPANY_KINDS = (
    "Works Mills Foundry Press Brewery Shipyard Ironworks Textiles Glassworks Potteries Bank Railways "
    "Instruments Chemicals Motors Tannery Papermill Optics Clockworks Ceramics Distillery Canning"
).split()
_VENUES = (
    "Market Fair Depot Workshop Bazaar Harbor Station School Library Bakery Warehouse Orchard Garden Store Museum Mill"
).split()
OCCUPATIONS = (
    "shipwright cartographer glassblower weaver astronomer botanist printer clockmaker surveyor "
    "architect engraver bookbinder brewer chemist composer sculptor physician lawyer banker potter "
    "tailor violinist poet novelist engineer geologist stonemason blacksmith carpenter teacher "
    "journalist photographer painter miller baker apothecary mapmaker navigator librarian judge"
).split()
_PRODUCTS = (
    "lamps bicycles pianos ropes sails bells clocks maps lenses barrels tiles carpets boots hats "
    "saddles soap candles paper ink glass nails anchors stoves looms telescopes"
).split()
_COLORS = (
    "red blue green yellow amber teal crimson violet ochre ivory scarlet indigo olive silver golden "
    "copper bronze maroon navy turquoise lilac coral cobalt emerald saffron charcoal jade plum striped "
    "speckled painted glazed polished tiny large wooden clay glass paper woolen"
).split()
_UNITS = (
    "marbles pencils crayons stickers bricks candles buttons seashells postcards lanterns tiles "
    "cupcakes muffins cookies bagels bolts screws tickets books comics stamps coins beads ribbons "
    "balloons kites bottles jars cups plates bowls spoons socks gloves towels pillows roses tulips "
    "seedlings pumpkins melons peaches walnuts chestnuts pebbles crystals feathers keys bells "
    "whistles puzzles maps brushes envelopes notebooks magnets batteries bulbs ropes buckets "
    "baskets lemons pears plums"
).split()
_HEAVY = "brick melon anvil log barrel stone sack drum bell tile".split()
_PACKS = "boxes crates bags cartons sacks trays packs tins bundles parcels barrels cases".split()
MONTHS = "January February March April May June July August September October November December".split()
_BUILDINGS = "Opera House,Town Hall,Bridge,Library,Observatory,Lighthouse,Museum,Station,Theatre,Market Hall".split(",")
_TOWERS = "clock tower,bell tower,lighthouse,water tower,watchtower,radio mast,church spire,windmill".split(",")
_CATEGORIES = "reptiles rodents birds insects amphibians spiders snails bats fish beetles".split()
_FESTIVALS = "winter fair,lantern festival,skating race,harvest market,fishing contest,music festival".split(",")
_GENRES = "novel memoir play travelogue satire".split()
TITLE_NOUNS = "Lanterns Winter Orchard Ferry Letters Harbor Clocks Salt Bells Ashes Tides Maps".split()


def _given(person: str) -> str:
    return person.split()[0]

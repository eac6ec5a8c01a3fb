// The product catalog: 180 SKUs in 6 categories, a pure function of this code. The generator reads
// it from memory (so its image needs nothing from data/), and `inventory --write` exports the same
// rows to data/catalog/products.csv for the ClickHouse dictionary; the passport pins its sha256.
import { createHash } from "node:crypto";
import { Rng } from "./rng.ts";

export interface Product {
  readonly sku: string;
  readonly name: string;
  readonly category: string;
  readonly brand: string;
  /** Unit price in kopecks; always whole rubles, because hits carry productPrice in integer rubles. */
  readonly priceKopecks: number;
  /** Relative popularity, an integer weight for draws. */
  readonly demand: number;
}

interface CategorySpec {
  readonly prefix: string;
  readonly category: string;
  readonly brands: readonly string[];
  /** Item kinds with their base price in rubles. */
  readonly items: readonly (readonly [string, number])[];
}

const VARIANTS: readonly (readonly [string, number])[] = [
  ["Basic", 80],
  ["Classic", 100],
  ["Premium", 145],
];

const CATEGORIES: readonly CategorySpec[] = [
  {
    prefix: "HOME", category: "home", brands: ["Domovoy", "Uyut", "NordHaus"],
    items: [["Table lamp", 1890], ["Wall clock", 1290], ["Storage box", 690], ["Picture frame", 490], ["Vase", 890],
      ["Shoe rack", 2490], ["Mirror", 2990], ["Laundry basket", 990], ["Coat hanger", 1590], ["Candle set", 590]],
  },
  {
    prefix: "TEXT", category: "textile", brands: ["Lenok", "SoftLine", "Volga Textile"],
    items: [["Bath towel", 790], ["Bed linen set", 3490], ["Blanket", 2990], ["Pillow", 1190], ["Curtains", 2490],
      ["Tablecloth", 1290], ["Bathrobe", 3290], ["Rug", 1990], ["Duvet cover", 1890], ["Kitchen towels", 490]],
  },
  {
    prefix: "KTCH", category: "kitchen", brands: ["Zhar", "Samovar", "ChefLine"],
    items: [["Frying pan", 1990], ["Saucepan", 2290], ["Knife set", 3490], ["Cutting board", 690], ["Kettle", 2790],
      ["Mug set", 990], ["Baking dish", 1190], ["Colander", 590], ["Spice rack", 1490], ["Food container set", 890]],
  },
  {
    prefix: "TECH", category: "electronics", brands: ["Vektor", "Polyus", "Sputnik"],
    items: [["Headphones", 3990], ["Power bank", 2490], ["Smart speaker", 6990], ["Phone charger", 1290], ["USB cable", 490],
      ["Action camera", 14990], ["Fitness band", 3490], ["Bluetooth speaker", 4490], ["Keyboard", 2990], ["Wireless mouse", 1490]],
  },
  {
    prefix: "KIDS", category: "kids", brands: ["Kroha", "Vesna Toys", "Umka"],
    items: [["Building blocks", 2490], ["Plush bear", 1290], ["Puzzle", 690], ["Toy car", 990], ["Board game", 1990],
      ["Drawing set", 890], ["Kids backpack", 2290], ["Doll", 1590], ["Bath toys", 590], ["Scooter", 5990]],
  },
  {
    prefix: "WEAR", category: "apparel", brands: ["Sever", "Bereg", "UrbanFox"],
    items: [["T-shirt", 990], ["Hoodie", 3490], ["Jeans", 3990], ["Sneakers", 5990], ["Socks pack", 490],
      ["Jacket", 7990], ["Cap", 890], ["Scarf", 1190], ["Dress", 3290], ["Shorts", 1490]],
  },
];

/** The catalog's own stream: fixed, independent of the world seed, so every world shares one dictionary. */
const CATALOG_ADDRESS = [0x43415441, 1];

/** Builds the 180 products; same code, same rows. */
export function buildCatalog(): readonly Product[] {
  const rng = new Rng(CATALOG_ADDRESS);
  const products: Product[] = [];
  for (const spec of CATEGORIES) {
    let n = 0;
    for (const [item, baseRubles] of spec.items) {
      for (const [variant, percent] of VARIANTS) {
        n += 1;
        // A ±10% wobble keeps prices from looking machine-made; ending them in 90 rubles keeps them shop-like.
        const wobble = 90 + rng.below(21);
        const rubles = Math.max(1, Math.round((baseRubles * percent * wobble) / 1_000_000)) * 100 - 10;
        products.push({
          sku: `${spec.prefix}-${String(n).padStart(3, "0")}`,
          name: `${variant} ${lowerFirstWord(item)}`,
          category: spec.category,
          brand: rng.pick(spec.brands),
          priceKopecks: rubles * 100,
          demand: 1 + rng.below(20) + (variant === "Classic" ? 10 : 0),
        });
      }
    }
  }
  return products;
}

/** "Table lamp" → "table lamp", but "USB cable" stays: acronyms keep their case. */
function lowerFirstWord(item: string): string {
  return /^[A-Z][a-z]/.test(item) ? item.charAt(0).toLowerCase() + item.slice(1) : item;
}

export const CATALOG_CSV_HEADER = "sku,name,category,brand,price,demand";

/** CSVWithNames text with a newline after each row; price in kopecks. No field needs quoting (checked). */
export function catalogCsv(products: readonly Product[]): string {
  const rows = products.map((p) => {
    const fields = [p.sku, p.name, p.category, p.brand, String(p.priceKopecks), String(p.demand)];
    if (fields.some((f) => /[",\n]/.test(f))) throw new Error(`catalog field needs quoting: ${fields.join("|")}`);
    return fields.join(",");
  });
  return `${CATALOG_CSV_HEADER}\n${rows.join("\n")}\n`;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}

export const CATEGORY_NAMES: readonly string[] = CATEGORIES.map((c) => c.category);

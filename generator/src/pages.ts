// The shop's pages, with URL and title already JSON-encoded: they are pasted into every hit line,
// so encoding them once here keeps the hot path to string concatenation.
import { CATEGORY_NAMES, type Product } from "./catalog.ts";
import { SEARCH_QUERIES, SITE } from "./reference-data.ts";

export interface Page {
  /** JSON string literal of the URL, quotes included. */
  readonly url: string;
  /** JSON string literal of the title, quotes included. */
  readonly title: string;
}

const SHOP = "Stand Shop";

function page(path: string, title: string): Page {
  return { url: JSON.stringify(`${SITE}${path}`), title: JSON.stringify(`${title} | ${SHOP}`) };
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export class ShopPages {
  readonly home = page("/", "Home");
  readonly cart = page("/cart", "Cart");
  readonly checkout = page("/checkout", "Checkout");
  readonly categories: readonly Page[];
  readonly searches: readonly Page[];
  private readonly products: ReadonlyMap<string, Page>;

  constructor(catalog: readonly Product[]) {
    this.categories = CATEGORY_NAMES.map((c) => page(`/catalog/${c}`, capitalise(c)));
    this.searches = SEARCH_QUERIES.map((q) => page(`/search?q=${encodeURIComponent(q)}`, `Search: ${q}`));
    this.products = new Map(catalog.map((p) => [p.sku, page(`/product/${p.sku}`, p.name)]));
  }

  product(sku: string): Page {
    const found = this.products.get(sku);
    if (!found) throw new Error(`no page for sku ${sku}`);
    return found;
  }

  category(name: string): Page {
    const index = CATEGORY_NAMES.indexOf(name);
    const found = this.categories[index];
    if (!found) throw new Error(`no page for category ${name}`);
    return found;
  }

  /** The order confirmation page; built per order, so not cached. */
  success(orderId: string): Page {
    return page(`/checkout/success?order=${orderId}`, `Order ${orderId} placed`);
  }
}

// Fixed dictionaries the traffic draws from: regions, devices, traffic sources, coupons, delivery.
// Weights are integers on purpose (see rng.ts). Region ids follow Yandex's geobase numbering.
import { WeightedList } from "./rng.ts";

export const COUNTER_ID = 57_260_601;
export const SITE = "https://shop.stand.example";
export const GOAL_CART = 3_001;
export const GOAL_PURCHASE = 3_002;

export interface Region {
  readonly country: string;
  readonly city: string;
  readonly countryId: number;
  readonly cityId: number;
  /** Visitor's UTC offset in minutes. */
  readonly tzMinutes: number;
  /** First two octets of the addresses handed out there. */
  readonly ipPrefix: string;
}

const region = (country: string, city: string, countryId: number, cityId: number, tzMinutes: number, ipPrefix: string): Region =>
  ({ country, city, countryId, cityId, tzMinutes, ipPrefix });

export const REGIONS = new WeightedList<Region>([
  [region("RU", "Moscow", 225, 213, 180, "95.165"), 28],
  [region("RU", "Saint Petersburg", 225, 2, 180, "178.70"), 11],
  [region("RU", "Samara", 225, 51, 240, "85.113"), 14],
  [region("RU", "Tolyatti", 225, 240, 240, "94.180"), 5],
  [region("RU", "Kazan", 225, 43, 180, "89.232"), 7],
  [region("RU", "Yekaterinburg", 225, 54, 300, "109.195"), 7],
  [region("RU", "Novosibirsk", 225, 65, 420, "46.146"), 6],
  [region("RU", "Nizhny Novgorod", 225, 47, 180, "79.165"), 5],
  [region("RU", "Saratov", 225, 194, 240, "37.113"), 4],
  [region("RU", "Ufa", 225, 172, 300, "92.50"), 4],
  [region("RU", "Krasnodar", 225, 35, 180, "91.215"), 5],
  [region("BY", "Minsk", 149, 157, 180, "37.214"), 2],
  [region("KZ", "Almaty", 159, 162, 300, "2.132"), 2],
]);

export const DEVICE_DESKTOP = 1;
export const DEVICE_MOBILE = 2;
export const DEVICE_TABLET = 3;
export const DEVICE_TV = 4;

export const DEVICE_CATEGORIES = new WeightedList<number>([
  [DEVICE_DESKTOP, 38],
  [DEVICE_MOBILE, 55],
  [DEVICE_TABLET, 6],
  [DEVICE_TV, 1],
]);

export interface Platform {
  readonly os: string;
  readonly osRoot: string;
  readonly browsers: WeightedList<readonly [string, number]>;
  readonly models: readonly string[];
  readonly screens: readonly (readonly [number, number])[];
}

/** Browser with the oldest and newest major versions seen. */
type BrowserRange = readonly [string, number];

const browsers = (...entries: (readonly [BrowserRange, number])[]): WeightedList<BrowserRange> => new WeightedList(entries);

const DESKTOP_SCREENS = [[1920, 1080], [1366, 768], [1536, 864], [2560, 1440], [1440, 900]] as const;
const DESKTOP_BROWSERS = browsers([["Chrome", 124], 45], [["Yandex Browser", 24], 30], [["Firefox", 125], 8], [["Edge", 124], 10], [["Opera", 109], 7]);
const ANDROID_BROWSERS = browsers([["Chrome Mobile", 124], 50], [["Yandex Browser", 24], 30], [["Samsung Internet", 24], 20]);
const IOS_BROWSERS = browsers([["Mobile Safari", 17], 80], [["Yandex Browser", 24], 20]);

export const PLATFORMS: ReadonlyMap<number, WeightedList<Platform>> = new Map([
  [DEVICE_DESKTOP, new WeightedList<Platform>([
    [{ os: "Windows 10", osRoot: "Windows", browsers: DESKTOP_BROWSERS, models: [""], screens: DESKTOP_SCREENS }, 40],
    [{ os: "Windows 11", osRoot: "Windows", browsers: DESKTOP_BROWSERS, models: [""], screens: DESKTOP_SCREENS }, 35],
    [{ os: "macOS 14", osRoot: "macOS", browsers: browsers([["Safari", 17], 55], [["Chrome", 124], 45]), models: [""], screens: [[1440, 900], [1512, 982], [1728, 1117]] }, 17],
    [{ os: "Ubuntu 24.04", osRoot: "Linux", browsers: browsers([["Firefox", 125], 60], [["Chrome", 124], 40]), models: [""], screens: DESKTOP_SCREENS }, 8],
  ])],
  [DEVICE_MOBILE, new WeightedList<Platform>([
    [{ os: "Android 14", osRoot: "Android", browsers: ANDROID_BROWSERS, models: ["Samsung Galaxy A54", "Xiaomi Redmi Note 13", "HONOR X8b", "realme C67", "POCO X6"], screens: [[412, 915], [393, 873], [360, 800]] }, 38],
    [{ os: "Android 13", osRoot: "Android", browsers: ANDROID_BROWSERS, models: ["Samsung Galaxy A34", "Xiaomi Redmi 12", "TECNO Spark 20"], screens: [[412, 915], [360, 780]] }, 24],
    [{ os: "iOS 17", osRoot: "iOS", browsers: IOS_BROWSERS, models: ["Apple iPhone 13", "Apple iPhone 14", "Apple iPhone 15", "Apple iPhone 11"], screens: [[390, 844], [393, 852], [414, 896]] }, 38],
  ])],
  [DEVICE_TABLET, new WeightedList<Platform>([
    [{ os: "iPadOS 17", osRoot: "iOS", browsers: IOS_BROWSERS, models: ["Apple iPad", "Apple iPad Air"], screens: [[810, 1080], [820, 1180]] }, 55],
    [{ os: "Android 13", osRoot: "Android", browsers: ANDROID_BROWSERS, models: ["Samsung Galaxy Tab S9", "Xiaomi Pad 6"], screens: [[800, 1280], [1200, 1920]] }, 45],
  ])],
  [DEVICE_TV, new WeightedList<Platform>([
    [{ os: "Tizen 7", osRoot: "Tizen", browsers: browsers([["Samsung Internet TV", 6], 1]), models: [""], screens: [[1920, 1080]] }, 60],
    [{ os: "webOS 23", osRoot: "webOS", browsers: browsers([["LG Browser", 23], 1]), models: [""], screens: [[1920, 1080]] }, 40],
  ])],
]);

export const LANGUAGES = new WeightedList<string>([["ru", 92], ["en", 5], ["kk", 1], ["be", 1], ["tt", 1]]);

export interface TrafficSource {
  readonly lastTrafficSource: string;
  readonly referers: readonly string[];
  readonly utmSource: string;
  readonly utmMedium: string;
  readonly campaigns: readonly string[];
  readonly gclid: boolean;
  readonly yclid: boolean;
  /** Where the visit lands: home, category or product. */
  readonly landing: "home" | "category" | "product";
}

const source = (s: Partial<TrafficSource> & Pick<TrafficSource, "lastTrafficSource" | "landing">): TrafficSource => ({
  referers: [""], utmSource: "", utmMedium: "", campaigns: [""], gclid: false, yclid: false, ...s,
});

export const TRAFFIC_SOURCES = new WeightedList<TrafficSource>([
  [source({ lastTrafficSource: "organic", landing: "product", referers: ["https://yandex.ru/search/", "https://www.google.com/", "https://ya.ru/"] }), 34],
  [source({ lastTrafficSource: "direct", landing: "home" }), 24],
  [source({ lastTrafficSource: "ad", landing: "product", referers: ["https://yandex.ru/search/"], utmSource: "yandex", utmMedium: "cpc", campaigns: ["summer_sale", "brand", "retargeting"], yclid: true }), 15],
  [source({ lastTrafficSource: "ad", landing: "category", referers: ["https://www.google.com/"], utmSource: "google", utmMedium: "cpc", campaigns: ["summer_sale", "brand"], gclid: true }), 7],
  [source({ lastTrafficSource: "social", landing: "category", referers: ["https://vk.com/", "https://t.me/"], utmSource: "vk", utmMedium: "social", campaigns: ["june_posts", "influencer"] }), 8],
  [source({ lastTrafficSource: "email", landing: "category", utmSource: "newsletter", utmMedium: "email", campaigns: ["weekly_digest", "abandoned_cart"] }), 6],
  [source({ lastTrafficSource: "referral", landing: "product", referers: ["https://market.example.ru/", "https://otzovik.example.com/", "https://pikabu.ru/"] }), 6],
]);

export const AD_TERMS: readonly string[] = ["buy online", "discount", "free delivery", "gift", "best price"];
export const AD_CONTENTS: readonly string[] = ["banner_a", "banner_b", "text_1", "text_2"];
export const AB_VARIANTS: readonly string[] = ["checkout_v1", "checkout_v2"];
export const SEARCH_QUERIES: readonly string[] = ["lamp", "towel", "pan", "headphones", "lego", "hoodie", "gift", "sale"];

export interface Coupon {
  readonly code: string;
  readonly percent: number;
}

/** The empty code means no coupon. */
export const COUPONS = new WeightedList<Coupon>([
  [{ code: "", percent: 0 }, 80],
  [{ code: "WELCOME10", percent: 10 }, 9],
  [{ code: "SUMMER15", percent: 15 }, 7],
  [{ code: "VIP20", percent: 20 }, 4],
]);

/** Delivery fee in kopecks. */
export const DELIVERY_FEES = new WeightedList<number>([[0, 40], [19_900, 30], [29_900, 20], [49_900, 10]]);

/** Local-hour weights of session starts on the counter clock, 00 … 23. */
export const HOUR_WEIGHTS: readonly number[] = [
  14, 8, 5, 3, 3, 4, 8, 16, 28, 38, 44, 46, 47, 46, 45, 44, 44, 47, 52, 60, 64, 58, 42, 26,
];

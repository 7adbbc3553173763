/**
 * Messages in many scripts, and what a reader of each would type to find them: the word as
 * written, in capitals, without its accents. Every backend must find what the memory scan finds.
 */

/** Session id → the user's words. */
export const SCRIPT_TEXTS: Readonly<Record<string, string>> = {
  greek: 'Ο Σίσυφος ανεβαίνει στην οδό ΟΔΟΣ',
  russian: 'Мой ёлка стоит у окна',
  hindi: 'हिन्दी भाषा में लिखा पाठ',
  arabic: 'اللغة العَرَبِيَّة جميلة',
  hebrew: 'שָׁלוֹם עולם',
  cjk: '東京の天気 서울 날씨',
  latin: 'Crème brûlée à İstanbul, Straße, naïve cafe\u0301',
  wide: 'ＡＢＣ full-width and ﬁle ligature, emoji😀inside',
};

/** Queries with the sessions whose user message they must find (each also in the answer). */
export const SCRIPT_QUERIES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['Σίσυφος', ['greek']],
  ['σισυφος', ['greek']],
  ['ΣΊΣΥΦΟΣ', ['greek']],
  ['οδος', ['greek']],
  ['"στην οδό"', ['greek']],
  ['мой', ['russian']],
  ['МОЙ', ['russian']],
  ['ёлка', ['russian']],
  ['елка', ['russian']],
  ['हिन्दी', ['hindi']],
  ['"हिन्दी भाषा"', ['hindi']],
  ['العربية', ['arabic']],
  ['العَرَبِيَّة', ['arabic']],
  ['שלום', ['hebrew']],
  ['東京の天気', ['cjk']],
  ['서울', ['cjk']],
  ['creme brulee', ['latin']],
  ['CRÈME', ['latin']],
  ['istanbul', ['latin']],
  ['straße', ['latin']],
  ['café', ['latin']],
  ['naive', ['latin']],
  ['abc', ['wide']],
  ['file', ['wide']],
  ['emoji', ['wide']],
  ['"emoji inside"', ['wide']],
  ['strasse', []],
];

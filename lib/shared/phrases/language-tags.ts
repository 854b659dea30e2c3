/*
 * Which of the languages we have serves a language tag someone asked for (ui_locales,
 * Accept-Language, a custom phrase's tag): BCP 47 tags compared by language and script, so that
 * a regional tag finds its language and Chinese finds its script.
 */

/** Tags already read: reading one (Intl.Locale's likely subtags) takes tens of microseconds. */
const read = new Map<string, string | null>();
const maxRead = 1_000;
/** Longer than any tag worth matching (ours are at most 16): not read, nor kept. */
const maxTagLength = 64;

/**
 * A tag's language and script, the script filled in where the tag leaves it out (CLDR's likely
 * subtags): `zh`, `zh-CN` and `zh-SG` are `zh-Hans`, `zh-TW` and `zh-HK` are `zh-Hant`, `es-419`
 * is `es-Latn`. Null for what is not a language tag.
 */
function languageAndScript(tag: string): string | null {
  if (tag.length > maxTagLength) {
    return null;
  }
  let key = read.get(tag);
  if (key === undefined) {
    try {
      const { language, script } = new Intl.Locale(tag).maximize();
      key = `${language}-${script ?? ''}`;
    } catch {
      key = null;
    }
    // Tags come from requests: the memory stays bounded whatever they hold.
    if (read.size >= maxRead) {
      read.clear();
    }
    read.set(tag, key);
  }
  return key;
}

/**
 * The tag of `available` that serves `wanted`: the same tag (any case), else one of the same
 * language in the same script, its bare language first (`de` for `de-AT`, `es` for `es-419`, `ja`
 * for `ja-JP`, `zh-CN` for `zh`, `zh-Hans` and `zh-SG`). Traditional Chinese (`zh-TW`, `zh-HK`,
 * `zh-Hant`) is not served Simplified: the next language asked for is tried instead.
 */
export function matchLanguage(wanted: string, available: readonly string[]): string | undefined {
  const lower = wanted.toLowerCase();
  const exact = available.find((tag) => tag.toLowerCase() === lower);
  if (exact !== undefined) {
    return exact;
  }
  const key = languageAndScript(wanted);
  const candidates = key === null ? [] : available.filter((tag) => languageAndScript(tag) === key);
  return candidates.find((tag) => lower.startsWith(`${tag.toLowerCase()}-`)) ?? candidates[0];
}

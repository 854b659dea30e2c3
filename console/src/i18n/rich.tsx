/** A translated text's `<code>` and `<strong>` marks as elements (never as HTML: the rest stays text). */
export function Rich({ text }: { text: string }) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(/<(code|strong)>(.*?)<\/\1>/g)) {
    parts.push(text.slice(last, match.index));
    parts.push(match[1] === 'code' ? <code>{match[2]}</code> : <strong>{match[2]}</strong>);
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return <>{parts}</>;
}

const MAX_LENGTH = 100;

/**
 * decisions.md: the upload's base name made safe (no path parts, no control characters,
 * at most 100 characters in all) with the extension of the output format.
 */
export function resultFilename(uploadName: string, extension: string): string {
  const baseName = uploadName.split(/[/\\]/).pop() ?? '';
  const stem = baseName
    .replace(/\.[^.]*$/, '')
    // Control and format characters (bidi overrides such as U+202E can disguise an extension).
    .replace(/[\p{Cc}\p{Cf}"<>|?*:]/gu, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '');
  const suffix = `.${extension}`;
  const safeStem = [...(stem || 'image')].slice(0, MAX_LENGTH - suffix.length).join('').trim();
  return (safeStem || 'image') + suffix;
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  // RFC 8187 attr-char excludes ' ( ) * which encodeURIComponent leaves alone.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

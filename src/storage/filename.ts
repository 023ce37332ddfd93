const MAX_LENGTH = 100;

/**
 * decisions.md: the upload's base name made safe (no path parts, no control characters,
 * at most 100 characters in all) with the extension of the output format.
 */
export function resultFilename(uploadName: string, extension: string): string {
  const baseName = uploadName.split(/[/\\]/).pop() ?? '';
  const stem = baseName
    .replace(/\.[^.]*$/, '')
    .replace(/[\u0000-\u001f\u007f-\u009f"<>|?*:]/g, '')
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
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

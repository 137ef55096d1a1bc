/**
 * The fields a web form may carry to steer how its post is read and answered. They are never case data: they
 * are removed from the body before validation and never stored, queued or forwarded.
 *
 * ```html
 * <input type="hidden" name="_charset_">                                  <!-- the browser fills in its encoding -->
 * <input type="hidden" name="_success_url" value="https://www.example.com/thanks">   <!-- 303 here, ?CrmId=… -->
 * <input type="hidden" name="_error_url" value="https://www.example.com/sorry">      <!-- 303 here, ?reason=… -->
 * <input name="website" tabindex="-1" autocomplete="off" style="display:none">  <!-- honeypot: people leave it empty -->
 * ```
 */
export const controlFields = {
  /** The encoding the page submitted in (HTML fills a hidden `_charset_` field by itself). */
  charset: '_charset_',
  /** Where the browser goes after an accepted case, with `?CrmId=<id>`; an allowed origin only. */
  successUrl: '_success_url',
  /** Where the browser goes after a refused case, with `?reason=<reason>`; an allowed origin only. */
  errorUrl: '_error_url',
  /** The honeypot: hidden from people, filled by bots. A post with it filled is discarded as if accepted. */
  honeypot: 'website',
} as const;

export const controlFieldNames: readonly string[] = Object.values(controlFields);

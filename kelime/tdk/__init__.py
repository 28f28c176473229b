"""What kelime knows of TDK's Güncel Türkçe Sözlük, without any network code: what a
`/gts` reply means (`replies`), the crawl store (`store`), entries → candidate words
(`entries`) and entries as text (`render`). The crawler and `kelime define` fetch; this
package only judges, stores and reads."""

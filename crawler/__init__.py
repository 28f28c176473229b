"""The TDK crawler (Scrapy for the bulk crawl, httpx for single look-ups): a shell around
kelime.tdk. Installed as `kelime.crawler`."""

#!/usr/bin/env python3
"""Writes the access log of synthetic web sites whose DUST is known, and the
ground truth: which of the URLs in the log name the same page.

DUST (Different URLs with Similar Text; Bar-Yossef, Keidar and Schonfeld, "Do
not crawl in the DUST", WWW 2007) is what `canonurl mine` is to learn from a
site's own log. This generator plants every family of it that the miner is
meant to find, and the traps that look like DUST in an access log but are not,
so that the mined rules can be scored: precision and recall of the URL pairs
they merge, against the truth written here.

Families planted (the truth merges these spellings):

  irrelevant-param  shop:  /product?id=N&ref=PARTNER (ref changes nothing)
  default-param     shop:  /catalog?cat=C&page=1 = /catalog?cat=C
  substitution      news:  /story?id=N = /story_N
  drift-param       news:  /2026/10/SLUG?via=rss = /2026/10/SLUG (an irrelevant
                           parameter on articles whose size grows day by day)
  index-file        news:  / = /home.html, /sports/ = /sports/home.html
  redirect          news:  /old/story/N answers 301, the client then fetches /story_N
  slug              books: /books/ANY-SLUG/ISBN-item.html (the slug is not read)
  case              iis:   /Products/Widget-7.aspx = /products/widget-7.aspx
  host-alias        corp:  203.0.113.7 = corp.example;
                    blogs: USER.blogs.example/X = www.blogs.example/USER/X
  literal-alias     corp:  /about-us = /company/about

With --redirects, one more site whose pages moved, each old URL answering 301
and its client fetching the new one a second later (redirects as evidence):

  moved-prefix      docs:  /old-docs/TOPIC/SLUG = /docs/TOPIC/SLUG,
                           /kb/SLUG = /help/articles/SLUG (no digits: only the
                           redirects link the two)
  trailing-slash    docs:  /guide/SLUG = /guide/SLUG/

Traps (the truth keeps these apart, though the log makes them look alike):

  template          shop:  discontinued products, one template, one size
  reorder           shop:  &sort=asc and &sort=desc: same bytes, not the same page
  content-param     shop:  &page=2..5 (other content, other sizes)
  soft-404          shop:  /p/WORD answers 200 with the same not-found page
  hard-404          news:  /Sports/ (wrong case on a case-sensitive server) is 404
  drift             news:  articles whose size grows from day to day (their
                           `?via=rss` spelling, family drift-param, is the same
                           page: the truth merges it, a miner must compare sizes
                           of the same day to see it)
  drift-yesterday   news:  `?edition=yesterday` of an article: on each day the
                           size the article had the day before (equal sizes on
                           other days, not the same page)
  aborted           every site: some 200 responses are cut short (smaller bytes)

Output: a `vhost` combined log (`host:443 client - - [time] "GET target
HTTP/1.1" status bytes "referer" "agent"`), in time order, and a TSV truth file
with a header row: url, page, family, held_out, first_day, requests. `url` is
the URL as requested (https://host/target), `page` names the page (equal
pages, equal names), `family` says which planted spelling or trap the URL is.
`--holdout` keeps a fraction of the pages out of the log altogether: their
URLs are in the truth with held_out 1 (first_day -1, requests 0), so that
rules mined from the log are scored on URLs the miner never saw. Every
spelling of a page in the log is requested at least once in each half of it
(the miner learns on the earlier part and confirms on the later).

Deterministic: the same options give the same bytes (standard library only).

    python3 data/gen-dust-site.py --seed 7 --days 14 --requests 200000 \\
        --log site.log --truth truth.tsv

Score a set of rules against the truth with data/dust-eval.py.
"""

import argparse
import random
import sys
import time as _time

START = 1_790_812_800  # 2026-10-01 00:00:00 UTC
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()

PARTNERS = [
    "newsletter", "partner-1", "affil7", "homepage-box", "sidebar", "footer",
    "mail-2026", "promo", "app", "rss", "widget", "blogroll", "cmp-fall", "deals",
]
WORDS = [
    "red", "garden", "chair", "lamp", "river", "blue", "winter", "glass", "stone",
    "music", "paper", "light", "table", "cloud", "forest", "ocean", "silver", "coffee",
    "bridge", "castle", "pencil", "summer", "planet", "rocket", "violin", "window",
]
SECTIONS = ["sports", "world", "tech", "science", "culture", "business", "health"]
BLOG_USERS = ["shuchao", "mlin", "kpatel", "aurora", "dvogel", "zhen"]
AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
]


class Page:
    """One resource of a site: its name in the truth and how its size behaves."""

    __slots__ = ("name", "base", "jitter", "drift", "status")

    def __init__(self, name, base, jitter=0, drift=0, status=200):
        self.name = name
        self.base = base  # bytes of the 200 response on day 0
        self.jitter = jitter  # 0..jitter bytes added per response (tokens, timestamps)
        self.drift = drift  # bytes added per day (comments, new items)
        self.status = status

    def size(self, rng, day):
        return self.base + self.drift * day + (rng.randint(0, self.jitter) if self.jitter else 0)


class Spelling:
    """One way a page is requested: host, target and the family it stands for."""

    __slots__ = ("host", "target", "family", "redirect_to")

    def __init__(self, host, target, family, redirect_to=None):
        self.host = host
        self.target = target
        self.family = family
        self.redirect_to = redirect_to  # a Spelling the client fetches next (301)


class Site:
    """Pages with their spellings and weights: a request picks a page by
    popularity, then one of its spellings."""

    def __init__(self):
        self.entries = []  # (page, [(weight, Spelling)])

    def add(self, page, spellings):
        self.entries.append((page, spellings))


def word_slug(rng, n):
    return "-".join(rng.choice(WORDS) for _ in range(n))


def build_sites(rng, scale, redirects=False):
    """All the sites, as one list of (page, spellings). `scale` multiplies the
    number of pages of each kind; `redirects` adds docs.example (drawn last,
    so the other sites are the same with it or without)."""
    s = Site()

    # shop.example: products with an irrelevant `ref`, discontinued products
    # sharing one template, catalogs with a default page, reorder-only sort,
    # and a soft 404.
    shop = "shop.example"
    products = int(400 * scale)
    discontinued = int(60 * scale)
    for n in range(1, products + discontinued + 1):
        if n <= products:
            page = Page("shop/product/%d" % n, rng.randint(8_000, 60_000), jitter=16)
        else:
            page = Page("shop/product/%d" % n, 5_123, jitter=16)
        fam = "canonical" if n <= products else "template"
        spell = [(70, Spelling(shop, "/product?id=%d" % n, fam))]
        for partner in rng.sample(PARTNERS, 3):
            spell.append((10, Spelling(shop, "/product?id=%d&ref=%s" % (n, partner), "irrelevant-param")))
        spell.append((5, Spelling(shop, "/product?ref=%s&id=%d" % (rng.choice(PARTNERS), n), "irrelevant-param")))
        s.add(page, spell)
    for c in range(1, int(40 * scale) + 1):
        base = rng.randint(20_000, 90_000)
        first = Page("shop/catalog/%d/page1" % c, base, jitter=16)
        s.add(first, [
            (60, Spelling(shop, "/catalog?cat=%d" % c, "canonical")),
            (25, Spelling(shop, "/catalog?cat=%d&page=1" % c, "default-param")),
        ])
        for order in ("asc", "desc"):
            # Same items, other order: the same number of bytes.
            s.add(Page("shop/catalog/%d/page1/%s" % (c, order), base, jitter=16),
                  [(10, Spelling(shop, "/catalog?cat=%d&sort=%s" % (c, order), "reorder"))])
        for p in range(2, 6):
            s.add(Page("shop/catalog/%d/page%d" % (c, p), rng.randint(20_000, 90_000), jitter=16),
                  [(8, Spelling(shop, "/catalog?cat=%d&page=%d" % (c, p), "content-param"))])
    for i in range(int(150 * scale)):
        word = "%s-%s%d" % (rng.choice(WORDS), rng.choice(WORDS), i)
        s.add(Page("shop/missing/%s" % word, 4_321), [(1, Spelling(shop, "/p/%s" % word, "soft-404"))])

    # news.example: /story?id=N = /story_N, index files named home.html, old
    # links that redirect, articles whose size drifts, and a case-sensitive
    # server (a wrong case is 404).
    news = "news.example"
    for n in range(1, int(300 * scale) + 1):
        page = Page("news/story/%d" % n, rng.randint(15_000, 45_000), jitter=12)
        canonical = Spelling(news, "/story_%d" % n, "canonical")
        spell = [(50, canonical), (40, Spelling(news, "/story?id=%d" % n, "substitution"))]
        if n % 3 == 0:
            spell.append((10, Spelling(news, "/old/story/%d" % n, "redirect", redirect_to=canonical)))
        s.add(page, spell)
    s.add(Page("news/home", 70_000, jitter=40), [
        (60, Spelling(news, "/", "canonical")),
        (20, Spelling(news, "/home.html", "index-file")),
    ])
    for sec in SECTIONS:
        s.add(Page("news/section/%s" % sec, rng.randint(30_000, 80_000), jitter=40), [
            (60, Spelling(news, "/%s/" % sec, "canonical")),
            (20, Spelling(news, "/%s/home.html" % sec, "index-file")),
        ])
        s.add(Page("news/missing/%s" % sec.capitalize(), 1_234, status=404),
              [(4, Spelling(news, "/%s/" % sec.capitalize(), "hard-404"))])
    for n in range(int(120 * scale)):
        slug = "2026/10/%s-%d" % (word_slug(rng, 3), n)
        base, drift = rng.randint(10_000, 30_000), rng.randint(50, 400)
        s.add(Page("news/article/%d" % n, base, jitter=12, drift=drift), [
            (30, Spelling(news, "/%s" % slug, "drift")),
            (15, Spelling(news, "/%s?via=rss" % slug, "drift-param")),
        ])
        # Yesterday's edition of the article: on day D it is the article's
        # page of day D - 1, byte for byte in size. Pooled over days, the two
        # share sizes; on any one day they differ by the day's drift.
        s.add(Page("news/article/%d/yesterday" % n, base - drift, jitter=12, drift=drift),
              [(8, Spelling(news, "/%s?edition=yesterday" % slug, "drift-yesterday"))])

    # books.example: the slug before the ISBN is not read by the server.
    books = "books.example"
    for n in range(int(250 * scale)):
        isbn = "978%010d" % rng.randint(0, 9_999_999_999)
        page = Page("books/%s" % isbn, rng.randint(12_000, 40_000))
        title = word_slug(rng, 3)
        spell = [(60, Spelling(books, "/books/%s/%s-item.html" % (title, isbn), "canonical"))]
        for _ in range(3):
            spell.append((12, Spelling(books, "/books/%s/%s-item.html" % (word_slug(rng, rng.randint(1, 4)), isbn), "slug")))
        s.add(page, spell)
    for n in range(int(60 * scale)):
        term = word_slug(rng, 2)
        s.add(Page("books/search/%s" % term, rng.randint(9_000, 30_000), jitter=8),
              [(5, Spelling(books, "/search?q=%s" % term, "content-param"))])

    # iis.example: a case-insensitive server.
    iis = "iis.example"
    for n in range(1, int(150 * scale) + 1):
        page = Page("iis/widget/%d" % n, rng.randint(5_000, 25_000))
        spell = [
            (60, Spelling(iis, "/Products/Widget-%d.aspx" % n, "canonical")),
            (25, Spelling(iis, "/products/widget-%d.aspx" % n, "case")),
            (10, Spelling(iis, "/PRODUCTS/WIDGET-%d.ASPX" % n, "case")),
        ]
        s.add(page, spell)

    # corp.example: reached by its IP address too; /about-us is /company/about.
    corp = "corp.example"
    ip = "203.0.113.7"
    corp_paths = ["/", "/company/about", "/contact", "/pricing", "/security", "/press"]
    corp_paths += ["/jobs/%d" % n for n in range(int(80 * scale))]
    for path in corp_paths:
        page = Page("corp%s" % path, rng.randint(6_000, 30_000), jitter=8)
        spell = [(70, Spelling(corp, path, "canonical")), (20, Spelling(ip, path, "host-alias"))]
        if path == "/company/about":
            spell.append((30, Spelling(corp, "/about-us", "literal-alias")))
        s.add(page, spell)

    # blogs.example: USER.blogs.example/X is www.blogs.example/USER/X.
    for user in BLOG_USERS:
        posts = ["/"] + ["/p/%s-%d.html" % (word_slug(rng, 2), n) for n in range(int(25 * scale))]
        for post in posts:
            page = Page("blogs/%s%s" % (user, post), rng.randint(8_000, 40_000), jitter=8)
            s.add(page, [
                (60, Spelling("www.blogs.example", "/%s%s" % (user, post), "canonical")),
                (30, Spelling("%s.blogs.example" % user, post, "host-alias")),
            ])
    if redirects:
        moved_pages(s, rng, scale)
    return s.entries


def moved_pages(s, rng, scale):
    """docs.example: pages that moved, their old URLs answering 301 (the
    client fetches the new one next). Slugs without digits, so that only the
    redirects say which old URL is which new one."""
    docs = "docs.example"
    seen = set()

    def slug():
        while True:
            w = word_slug(rng, 3)
            if w not in seen:
                seen.add(w)
                return w

    for n in range(int(60 * scale)):
        topic, name = rng.choice(WORDS), slug()
        page = Page("docs/%s/%s" % (topic, name), rng.randint(6_000, 40_000), jitter=8)
        new = Spelling(docs, "/docs/%s/%s" % (topic, name), "canonical")
        s.add(page, [(70, new), (30, Spelling(docs, "/old-docs/%s/%s" % (topic, name), "moved-prefix",
                                               redirect_to=new))])
    for n in range(int(40 * scale)):
        name = slug()
        page = Page("docs/kb/%s" % name, rng.randint(6_000, 40_000), jitter=8)
        new = Spelling(docs, "/help/articles/%s" % name, "canonical")
        s.add(page, [(60, new), (40, Spelling(docs, "/kb/%s" % name, "moved-prefix", redirect_to=new))])
    for n in range(int(30 * scale)):
        name = slug()
        page = Page("docs/guide/%s" % name, rng.randint(6_000, 40_000), jitter=8)
        new = Spelling(docs, "/guide/%s/" % name, "canonical")
        s.add(page, [(70, new), (30, Spelling(docs, "/guide/%s" % name, "trailing-slash", redirect_to=new))])


def clf_time(t):
    tm = _time.gmtime(t)
    return "%02d/%s/%04d:%02d:%02d:%02d +0000" % (
        tm.tm_mday, MONTHS[tm.tm_mon - 1], tm.tm_year, tm.tm_hour, tm.tm_min, tm.tm_sec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the number of pages")
    ap.add_argument("--log", required=True, help="the access log to write")
    ap.add_argument("--truth", required=True, help="the truth TSV to write")
    ap.add_argument("--redirects", action="store_true",
                    help="add docs.example, whose moved pages answer 301 and are followed at once")
    ap.add_argument("--holdout", type=float, default=0.2,
                    help="fraction of pages kept out of the log (default 0.2): their URLs are only "
                         "in the truth, to score rules on URLs the miner never saw")
    args = ap.parse_args()
    if args.days < 1 or args.requests < 1 or args.scale <= 0:
        ap.error("--days, --requests and --scale must be positive")
    if not 0 <= args.holdout < 1:
        ap.error("--holdout is a fraction in [0, 1)")

    rng = random.Random(args.seed)
    entries = build_sites(rng, args.scale, args.redirects)
    # Held-out pages: written to the truth only.
    held_out = set(i for i in range(len(entries)) if rng.random() < args.holdout)
    # Popularity: Zipf-like over a random order of the pages.
    order = list(range(len(entries)))
    rng.shuffle(order)
    weights = [0.0] * len(entries)
    for rank, i in enumerate(order):
        weights[i] = 1.0 / (rank + 1) ** 0.8
    # Every spelling is requested at least once in the first half and once in
    # the second, so that both the learning and the held-out part see it.
    for i in held_out:
        weights[i] = 0.0
    picks = rng.choices(range(len(entries)), weights=weights, k=args.requests)
    clients = ["%d.%d.%d.%d" % (rng.randint(1, 223), rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
               for _ in range(4_000)]
    span = args.days * 86_400
    events = []  # (time, seq, line)
    truth = {}  # url -> [page, family, first_day, requests]
    seq = 0

    def emit(t, client, spelling, status, size, agent):
        nonlocal seq
        url = "https://%s%s" % (spelling.host, spelling.target)
        line = '%s:443 %s - - [%s] "GET %s HTTP/1.1" %d %s "-" "%s"\n' % (
            spelling.host, client, clf_time(t), spelling.target, status,
            "-" if size is None else str(size), agent)
        events.append((t, seq, line))
        seq += 1
        return url

    def request(i, t):
        page, spellings = entries[i]
        spelling = rng.choices([sp for _, sp in spellings], weights=[w for w, _ in spellings])[0]
        client = rng.choice(clients)
        agent = rng.choice(AGENTS)
        day = (t - START) // 86_400
        if spelling.redirect_to is not None:
            url = emit(t, client, spelling, 301, 178 + len(spelling.redirect_to.target), agent)
            record(url, page, spelling, day)
            spelling = spelling.redirect_to
            t += 1
        roll = rng.random()
        if page.status != 200:
            status, size = page.status, page.base
        elif roll < 0.08:
            status, size = 304, None  # a cached copy revalidated: no body
        elif roll < 0.083:
            status, size = 503, 299  # the server is overloaded now and then
        elif roll < 0.093:
            status, size = 200, rng.randint(0, max(0, page.size(rng, day) - 1))  # aborted transfer
        else:
            status, size = 200, page.size(rng, day)
        url = emit(t, client, spelling, status, size, agent)
        record(url, page, spelling, day)

    def record(url, page, spelling, day):
        row = truth.get(url)
        if row is None:
            truth[url] = [page.name, spelling.family, day, 1]
        else:
            row[3] += 1

    # Each spelling at least once in each half of the log.
    half = span // 2
    for i, (page, spellings) in enumerate(entries):
        if i in held_out:
            for _, sp in spellings:
                url = "https://%s%s" % (sp.host, sp.target)
                truth[url] = [page.name, sp.family, -1, 0]
            continue
        for _, sp in spellings:
            for lo in (0, half):
                t = START + lo + rng.randrange(half)
                # Request this spelling: temporarily pin it.
                client = rng.choice(clients)
                day = (t - START) // 86_400
                if sp.redirect_to is not None:
                    url = emit(t, client, sp, 301, 178 + len(sp.redirect_to.target), AGENTS[0])
                    record(url, page, sp, day)
                    target, t = sp.redirect_to, t + 1
                else:
                    target = sp
                status = page.status
                size = page.base if status != 200 else page.size(rng, day)
                url = emit(t, client, target, status, size, AGENTS[0])
                record(url, page, target, day)
    for i in picks:
        request(i, START + rng.randrange(span))

    events.sort()
    with open(args.log, "w", encoding="ascii", newline="\n") as f:
        for _, _, line in events:
            f.write(line)
    with open(args.truth, "w", encoding="ascii", newline="\n") as f:
        f.write("url\tpage\tfamily\theld_out\tfirst_day\trequests\n")
        for url in sorted(truth):
            page, family, day, n = truth[url]
            f.write("%s\t%s\t%s\t%d\t%d\t%d\n" % (url, page, family, int(day < 0), day, n))
    print("gen-dust-site: %d lines, %d distinct URLs, %d pages" % (
        len(events), len(truth), len({r[0] for r in truth.values()})), file=sys.stderr)


if __name__ == "__main__":
    main()

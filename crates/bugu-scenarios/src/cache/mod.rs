//! A cache that evicts: two bounded LRU caches of URLs (the `lru` crate), each with a cuckoo
//! filter of exactly the URLs it holds, and the filters' bytes exchanged between the two as
//! cache digests.
//!
//! ```sh
//! cargo run --release -p bugu-scenarios --example cache
//! ```
//!
//! ## What it shows
//!
//! Each node is an `LruCache` bounded to 50,000 URLs, in front of an origin (a function that
//! makes the response body). Requests follow a Zipf-like popularity over a catalog of a million
//! URLs, each node with its own random stream. A node's filter tracks its cached set exactly:
//! a URL enters the filter when it is admitted to the cache, and the URL the LRU evicts to make
//! room leaves it at once. At every exchange and at the end, each node checks that its filter
//! holds as many items as the cache and finds every cached URL.
//!
//! After a warm-up the two nodes exchange their filters' bytes (`to_bytes`, sent over a TCP
//! connection on the loopback interface) like Squid's cache digests, and again every 100,000
//! requests per node. Each wraps its peer's bytes in a `CuckooView`, a zero-copy view that
//! answers queries straight from the received buffer, and asks it, for every URL it misses, "does
//! my peer probably have this?". A "yes" for a URL that the peer really still holds is served by
//! the peer instead of the origin. The report gives each node's hit rate, the digest's size
//! against the plain list of URLs, and the digest's measured false-positive rate: the share of
//! "yes" among the URLs that were not in the peer's cache when it sent the digest (the list of
//! those URLs, which is also what the peer would have sent instead, is kept as the ground truth).
//! A digest is a snapshot, and the peer keeps changing its cache until the next exchange, so an
//! answer can be stale: a "yes" for a URL the peer has evicted since (a wasted trip to the peer),
//! or a "no" for a URL the peer has fetched since (a trip to the origin the peer could have
//! saved). Both are counted apart from the digest's false positives, at the moment of the
//! question, against the peer's cache as it is then. A stale "no" is not a false negative of the
//! filter (the URL was not in the peer's cache when the digest was made), but to the node it
//! looks like one, so the report gives it next to the false negatives.
//!
//! The URLs are hashed as bytes (`insert_bytes`, `contains_bytes`), so a peer written in any
//! language that hashes the same bytes reads the digest the same way.

use std::collections::HashSet;
use std::error::Error;
use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::num::NonZeroUsize;

use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, Persist};
use lru::LruCache;

use crate::util::{SplitMix64, Zipf, count, percent, ratio};

#[cfg(test)]
mod tests;

/// The sizes of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// URLs each cache holds at most.
    pub cache_entries: usize,
    /// Distinct URLs requested.
    pub catalog: usize,
    /// The exponent of the Zipf popularity (the `s` of `1 / rank^s`).
    pub zipf_exponent: f64,
    /// Requests per node before the digests are exchanged.
    pub warmup_requests: usize,
    /// Requests per node after the warm-up (the measured ones).
    pub requests: usize,
    /// Requests per node between two exchanges of digests.
    pub exchange_every: usize,
    /// Size of a response body.
    pub body_bytes: usize,
    /// The digests' false-positive rate.
    pub false_positive_rate: f64,
    /// Seed of the request streams.
    pub seed: u64,
}

impl Default for Config {
    /// The full-size run: caches of 50,000 URLs, a catalog of a million, a million measured
    /// requests per node.
    fn default() -> Self {
        Config {
            cache_entries: 50_000,
            catalog: 1_000_000,
            zipf_exponent: 0.9,
            warmup_requests: 500_000,
            requests: 1_000_000,
            exchange_every: 100_000,
            body_bytes: 256,
            false_positive_rate: 0.01,
            seed: 0xcac4e,
        }
    }
}

impl Config {
    /// A run of a fraction of a second, for tests.
    pub fn small() -> Self {
        Config {
            cache_entries: 1_000,
            catalog: 20_000,
            warmup_requests: 10_000,
            requests: 20_000,
            exchange_every: 5_000,
            ..Config::default()
        }
    }
}

/// One node's numbers.
#[derive(Debug, Clone)]
pub struct NodeReport {
    /// The node's name.
    pub name: &'static str,
    /// Measured requests.
    pub requests: usize,
    /// Of those, found in the node's own cache.
    pub hits: usize,
    /// Misses served by the peer, after its digest said "yes".
    pub peer_hits: usize,
    /// URLs evicted by the LRU over the whole run (each removed from the filter).
    pub evictions: usize,
    /// URLs in the cache at the end.
    pub cached: usize,
    /// Items in the filter at the end (must equal `cached`).
    pub filter_items: usize,
    /// Times the filter was checked against the cache (at every exchange and at the end).
    pub checks: usize,
    /// Cached URLs the filter did not find, over all checks (must be 0).
    pub cached_not_in_filter: usize,
    /// Checks at which the filter's item count differed from the cache's (must be 0).
    pub size_mismatches: usize,
    /// Bytes of one digest this node sent.
    pub digest_bytes: usize,
    /// Bytes the list of its cached URLs would have taken instead (one per line), on average.
    pub url_list_bytes: usize,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The URLs each cache holds at most.
    pub cache_entries: usize,
    /// Distinct URLs requested.
    pub catalog: usize,
    /// The popularity's exponent.
    pub zipf_exponent: f64,
    /// The two nodes.
    pub nodes: [NodeReport; 2],
    /// Digest exchanges (one every `exchange_every` requests per node).
    pub exchanges: usize,
    /// Requests per node between exchanges.
    pub exchange_every: usize,
    /// Bytes that crossed the TCP connections (all digests, with their length prefixes).
    pub bytes_on_the_wire: usize,
    /// Misses for which the peer's digest was asked, both nodes together.
    pub digest_queries: usize,
    /// Of those, URLs that were in the peer's cache when it sent its digest.
    pub in_peer: usize,
    /// Digest "yes" answers.
    pub digest_yes: usize,
    /// "Yes" for URLs that were not in the peer's cache when it sent the digest.
    pub false_positives: usize,
    /// "No" for URLs that were in the peer's cache when it sent the digest (must be 0).
    pub false_negatives: usize,
    /// Correct "yes" answers for URLs the peer has evicted since it sent the digest.
    pub stale_yes: usize,
    /// Correct "no" answers for URLs the peer has fetched since it sent the digest: misses the
    /// peer could have served, sent to the origin.
    pub stale_no: usize,
    /// Misses whose URL was in the peer's cache at the moment the digest was asked (each is
    /// either served by the peer or a stale "no").
    pub peer_held_now: usize,
    /// The digests' false-positive bound (at full load).
    pub filter_bound: f64,
}

impl Report {
    /// The digests' measured false-positive rate: "yes" among URLs the peer did not hold.
    pub fn false_positive_rate(&self) -> f64 {
        ratio(self.false_positives as u64, (self.digest_queries - self.in_peer) as u64)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cache: 2 nodes, each an LRU of {} URLs (lru crate); {} URLs requested with Zipf({}) popularity",
            count(self.cache_entries),
            count(self.catalog),
            self.zipf_exponent
        )?;
        for node in &self.nodes {
            let misses = node.requests - node.hits;
            writeln!(
                f,
                "node {}:                 {} requests, hit rate {}; {} misses served by the peer ({} of misses)",
                node.name,
                count(node.requests),
                percent(node.hits as u64, node.requests as u64, 1),
                count(node.peer_hits),
                percent(node.peer_hits as u64, misses as u64, 1)
            )?;
            writeln!(
                f,
                "node {} filter:          {} URLs for {} cached, {} evictions removed; checked {} times: {} cached URLs missing, {} size mismatches",
                node.name,
                count(node.filter_items),
                count(node.cached),
                count(node.evictions),
                count(node.checks),
                count(node.cached_not_in_filter),
                count(node.size_mismatches)
            )?;
            writeln!(
                f,
                "node {} digest:          {} bytes ({:.1} bits per URL) against {} bytes of URL list ({:.0}x smaller)",
                node.name,
                count(node.digest_bytes),
                node.digest_bytes as f64 * 8.0 / node.cached.max(1) as f64,
                count(node.url_list_bytes),
                node.url_list_bytes as f64 / node.digest_bytes.max(1) as f64
            )?;
        }
        writeln!(
            f,
            "bytes exchanged:        {} over TCP in {} exchanges, one every {} requests per node",
            count(self.bytes_on_the_wire),
            count(self.exchanges),
            count(self.exchange_every)
        )?;
        writeln!(
            f,
            "digest queries:         {} misses asked \"does my peer probably have this URL?\"",
            count(self.digest_queries)
        )?;
        writeln!(
            f,
            "digest said yes:        {} ({} held by the peer at the exchange, {} false positives)",
            count(self.digest_yes),
            count(self.digest_yes - self.false_positives),
            count(self.false_positives)
        )?;
        writeln!(
            f,
            "false-positive rate:    {:.3}% of {} URLs the peer did not hold (the filter's bound: {:.3}%)",
            self.false_positive_rate() * 100.0,
            count(self.digest_queries - self.in_peer),
            self.filter_bound * 100.0
        )?;
        writeln!(
            f,
            "false negatives:        {} (a \"no\" for a URL the peer held at the exchange)",
            count(self.false_negatives)
        )?;
        writeln!(
            f,
            "stale yes:              {} (held at the exchange, evicted by the peer since: a wasted trip to the peer)",
            count(self.stale_yes)
        )?;
        writeln!(
            f,
            "stale no:               {} (fetched by the peer since the exchange: sent to the origin, though the peer held it)",
            count(self.stale_no)
        )?;
        writeln!(
            f,
            "peer held when asked:   {} misses ({} of digest queries): {} served by the peer, {} missed by a stale no",
            count(self.peer_held_now),
            percent(self.peer_held_now as u64, self.digest_queries as u64, 1),
            count(self.peer_held_now.saturating_sub(self.stale_no)),
            count(self.stale_no)
        )?;
        Ok(())
    }
}

/// A URL of the catalog: varied paths, about 60 bytes on average.
fn url(item: usize) -> String {
    const SECTIONS: [&str; 6] = ["img", "js", "css", "video/segments", "api/v2/items", "fonts"];
    const EXTENSIONS: [&str; 6] = ["jpg", "js", "css", "ts", "json", "woff2"];
    let hash = SplitMix64::new(item as u64).next_u64();
    let kind = (hash % 6) as usize;
    let name_len = 8 + (hash >> 8) as usize % 17;
    let name = format!("{hash:016x}{:016x}", hash.rotate_left(23));
    format!("https://cdn.example.com/{}/{item:07}/{}.{}", SECTIONS[kind], &name[..name_len], EXTENSIONS[kind])
}

/// The origin: makes the response body of a URL (its bytes, repeated).
fn fetch_from_origin(url: &str, body_bytes: usize) -> Vec<u8> {
    url.bytes().cycle().take(body_bytes).collect()
}

/// A cache node: an LRU of URLs and the filter of exactly its keys.
struct Node {
    name: &'static str,
    cache: LruCache<String, Vec<u8>>,
    filter: CuckooFilter,
    rng: SplitMix64,
    requests: usize,
    hits: usize,
    peer_hits: usize,
    evictions: usize,
    checks: usize,
    cached_not_in_filter: usize,
    size_mismatches: usize,
}

impl Node {
    fn new(name: &'static str, config: &Config, seed: u64) -> Result<Self, Box<dyn Error>> {
        let entries =
            NonZeroUsize::new(config.cache_entries).ok_or("the cache must hold at least one URL")?;
        // One more than the cache: a URL enters the filter just before the LRU evicts to make
        // room for it.
        let filter = CuckooFilter::builder()
            .capacity(config.cache_entries + 1)
            .false_positive_rate(config.false_positive_rate)
            .build()?;
        Ok(Node {
            name,
            cache: LruCache::new(entries),
            filter,
            rng: SplitMix64::new(seed),
            requests: 0,
            hits: 0,
            peer_hits: 0,
            evictions: 0,
            checks: 0,
            cached_not_in_filter: 0,
            size_mismatches: 0,
        })
    }

    /// Stores a response; the URL enters the filter first, the evicted URL (if any) leaves it.
    fn admit(&mut self, url: String, body: Vec<u8>) -> Result<(), Box<dyn Error>> {
        self.filter.insert_bytes(url.as_bytes())?;
        if let Some((evicted, _)) = self.cache.push(url, body) {
            // `push` also returns the old entry of a key already cached, but `admit` is called
            // only on misses, so whatever comes back was evicted.
            self.filter.remove_bytes(evicted.as_bytes());
            self.evictions += 1;
        }
        Ok(())
    }

    /// Checks that the filter holds exactly the cached URLs: as many items as the cache, and
    /// every cached URL found. Failures are counted.
    fn check(&mut self) {
        self.checks += 1;
        self.size_mismatches += usize::from(self.filter.len() != self.cache.len());
        self.cached_not_in_filter +=
            self.cache.iter().filter(|(url, _)| !self.filter.contains_bytes(url.as_bytes())).count();
    }

    /// The URL list the node would send instead of a digest, one per line.
    fn url_list(&self) -> Vec<String> {
        self.cache.iter().map(|(url, _)| url.clone()).collect()
    }
}

/// What one node knows of its peer after the exchange.
struct PeerDigest<'a> {
    view: CuckooView<'a>,
    /// The peer's URLs when it sent the digest: the ground truth.
    held: HashSet<String>,
}

/// Tallies of the digest queries.
#[derive(Default)]
struct DigestTally {
    queries: usize,
    in_peer: usize,
    yes: usize,
    false_positives: usize,
    false_negatives: usize,
    stale_yes: usize,
    stale_no: usize,
    peer_held_now: usize,
}

/// Serves one request at `nodes[me]`. With a digest of the peer, a miss asks it and, on a "yes"
/// the peer can honour, takes the body from the peer instead of the origin.
fn serve(
    nodes: &mut [Node; 2],
    me: usize,
    zipf: &Zipf,
    config: &Config,
    digest: Option<(&PeerDigest<'_>, &mut DigestTally)>,
) -> Result<(), Box<dyn Error>> {
    let url = url(zipf.sample(&mut nodes[me].rng));
    serve_url(nodes, me, url, config, digest)
}

/// Serves a request for `url` at `nodes[me]` (see [`serve`]).
fn serve_url(
    nodes: &mut [Node; 2],
    me: usize,
    url: String,
    config: &Config,
    digest: Option<(&PeerDigest<'_>, &mut DigestTally)>,
) -> Result<(), Box<dyn Error>> {
    let (first, second) = nodes.split_at_mut(1);
    let (node, peer) = if me == 0 { (&mut first[0], &second[0]) } else { (&mut second[0], &first[0]) };
    node.requests += 1;
    if node.cache.get(&url).is_some() {
        node.hits += 1;
        return Ok(());
    }
    let mut body = None;
    if let Some((digest, tally)) = digest {
        let yes = digest.view.contains_bytes(url.as_bytes());
        let held = digest.held.contains(&url);
        tally.queries += 1;
        tally.in_peer += usize::from(held);
        tally.yes += usize::from(yes);
        tally.false_positives += usize::from(yes && !held);
        tally.false_negatives += usize::from(!yes && held);
        // The peer's cache now, which the digest may no longer match (`contains` and `peek` read
        // it without making the URL recently used).
        let held_now = peer.cache.contains(&url);
        tally.peer_held_now += usize::from(held_now);
        tally.stale_yes += usize::from(yes && held && !held_now);
        tally.stale_no += usize::from(!yes && !held && held_now);
        if let Some(peer_body) = peer.cache.peek(&url).filter(|_| yes) {
            node.peer_hits += 1;
            body = Some(peer_body.clone());
        }
    }
    let body = body.unwrap_or_else(|| fetch_from_origin(&url, config.body_bytes));
    node.admit(url, body)
}

/// What an exchange of digests delivered.
struct Exchanged {
    /// The bytes node A received (node B's digest).
    to_a: Vec<u8>,
    /// The bytes node B received (node A's digest).
    to_b: Vec<u8>,
    /// Bytes written to the connection, length prefixes included.
    wire_bytes: usize,
}

/// Sends both digests over a TCP connection on the loopback interface, each prefixed with its
/// length.
fn exchange(a: &[u8], b: &[u8]) -> Result<Exchanged, Box<dyn Error>> {
    fn send(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<usize> {
        stream.write_all(&(bytes.len() as u64).to_le_bytes())?;
        stream.write_all(bytes)?;
        stream.flush()?;
        Ok(8 + bytes.len())
    }
    fn receive(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
        let mut len = [0; 8];
        stream.read_exact(&mut len)?;
        let len = u64::from_le_bytes(len);
        // No allocation from the claimed length: the buffer grows as bytes arrive.
        let mut bytes = Vec::new();
        stream.take(len).read_to_end(&mut bytes)?;
        if bytes.len() as u64 != len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(bytes)
    }

    let listener = TcpListener::bind("127.0.0.1:0")?;
    // The connection is established (queued by the listener) before either side talks.
    let mut a_stream = TcpStream::connect(listener.local_addr()?)?;
    let (mut b_stream, _) = listener.accept()?;
    std::thread::scope(|scope| {
        // Node B, on its own thread: receive A's digest, send its own. Each side owns its end of
        // the connection and closes it when it returns, so a failure on one side ends the other's
        // read instead of blocking it.
        let b_side = scope.spawn(move || -> std::io::Result<(Vec<u8>, usize)> {
            let from_a = receive(&mut b_stream)?;
            let sent = send(&mut b_stream, b)?;
            Ok((from_a, sent))
        });
        // Node A: send, then receive B's digest.
        let a_side = (move || -> std::io::Result<(Vec<u8>, usize)> {
            let sent = send(&mut a_stream, a)?;
            Ok((receive(&mut a_stream)?, sent))
        })();
        let b_side = b_side.join().map_err(|_| "node B's side of the exchange panicked")?;
        let ((to_a, a_sent), (to_b, b_sent)) = (a_side?, b_side?);
        Ok(Exchanged { to_a, to_b, wire_bytes: a_sent + b_sent })
    })
}

/// Runs the scenario (see the module docs).
pub fn run(config: &Config) -> Result<Report, Box<dyn Error>> {
    if config.catalog == 0 || config.exchange_every == 0 {
        return Err(
            "the catalog must hold at least one URL, and digests be exchanged at some interval".into()
        );
    }
    let zipf = Zipf::new(config.catalog, config.zipf_exponent);
    let mut nodes = [Node::new("A", config, config.seed)?, Node::new("B", config, config.seed ^ 0xb0b)?];

    // Warm-up: the nodes take turns, without digests.
    for _ in 0..config.warmup_requests {
        for me in 0..2 {
            serve(&mut nodes, me, &zipf, config, None)?;
        }
    }
    for node in &mut nodes {
        (node.requests, node.hits) = (0, 0);
    }

    // The measured requests, in rounds: each starts with an exchange of digests, and every miss
    // of the round asks the peer's.
    let mut tally = DigestTally::default();
    let (mut exchanges, mut bytes_on_the_wire) = (0, 0);
    let mut digest_bytes = [0; 2];
    let mut url_list_bytes = [0; 2];
    let mut done = 0;
    while done < config.requests {
        for node in &mut nodes {
            node.check();
        }
        let lists = [nodes[0].url_list(), nodes[1].url_list()];
        let Exchanged { to_a, to_b, wire_bytes } =
            exchange(&nodes[0].filter.to_bytes(), &nodes[1].filter.to_bytes())?;
        let digests = [
            PeerDigest { view: CuckooView::from_bytes(&to_a)?, held: lists[1].iter().cloned().collect() },
            PeerDigest { view: CuckooView::from_bytes(&to_b)?, held: lists[0].iter().cloned().collect() },
        ];
        exchanges += 1;
        bytes_on_the_wire += wire_bytes;
        // What node i sent is what its peer received.
        digest_bytes[0] += to_b.len();
        digest_bytes[1] += to_a.len();
        for (sum, list) in url_list_bytes.iter_mut().zip(&lists) {
            *sum += list.iter().map(|url| url.len() + 1).sum::<usize>();
        }

        let round = config.exchange_every.min(config.requests - done);
        for _ in 0..round {
            for (me, digest) in digests.iter().enumerate() {
                serve(&mut nodes, me, &zipf, config, Some((digest, &mut tally)))?;
            }
        }
        done += round;
    }
    for node in &mut nodes {
        node.check();
    }

    let node_report = |i: usize| {
        let node = &nodes[i];
        NodeReport {
            name: node.name,
            requests: node.requests,
            hits: node.hits,
            peer_hits: node.peer_hits,
            evictions: node.evictions,
            cached: node.cache.len(),
            filter_items: node.filter.len(),
            checks: node.checks,
            cached_not_in_filter: node.cached_not_in_filter,
            size_mismatches: node.size_mismatches,
            digest_bytes: digest_bytes[i] / exchanges.max(1),
            url_list_bytes: url_list_bytes[i] / exchanges.max(1),
        }
    };
    Ok(Report {
        cache_entries: config.cache_entries,
        catalog: config.catalog,
        zipf_exponent: config.zipf_exponent,
        nodes: [node_report(0), node_report(1)],
        exchanges,
        exchange_every: config.exchange_every,
        bytes_on_the_wire,
        digest_queries: tally.queries,
        in_peer: tally.in_peer,
        digest_yes: tally.yes,
        false_positives: tally.false_positives,
        false_negatives: tally.false_negatives,
        stale_yes: tally.stale_yes,
        stale_no: tally.stale_no,
        peer_held_now: tally.peer_held_now,
        filter_bound: nodes[0].filter.false_positive_rate(),
    })
}

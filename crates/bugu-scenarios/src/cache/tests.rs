//! The digest's answers against the peer's cache at the moment of the question: stale "yes" and
//! stale "no" are counted, apart from false positives and false negatives.

use std::error::Error;

use bugu::{CuckooView, Filter, FilterMut, Persist};

use super::{Config, DigestTally, Node, PeerDigest, serve_url, url};

#[test]
fn answers_made_stale_by_the_peer_after_the_exchange_are_counted() -> Result<(), Box<dyn Error>> {
    let config = Config::small();
    let mut nodes = [Node::new("A", &config, 1)?, Node::new("B", &config, 2)?];
    let (kept, fetched_since, evicted_since) = (url(1), url(2), url(3));
    nodes[1].admit(kept.clone(), b"kept".to_vec())?;
    nodes[1].admit(evicted_since.clone(), b"evicted".to_vec())?;

    // The exchange: node A receives B's digest, and keeps what B held as the ground truth.
    let bytes = nodes[1].filter.to_bytes();
    let digest =
        PeerDigest { view: CuckooView::from_bytes(&bytes)?, held: nodes[1].url_list().into_iter().collect() };
    assert!(!digest.view.contains_bytes(fetched_since.as_bytes()), "a false positive: pick another URL");

    // Node B changes its cache after the exchange, as it does between any two.
    nodes[1].admit(fetched_since.clone(), b"fetched".to_vec())?;
    nodes[1].cache.pop(&evicted_since);
    nodes[1].filter.remove_bytes(evicted_since.as_bytes());

    let mut tally = DigestTally::default();
    for url in [&fetched_since, &kept, &evicted_since] {
        serve_url(&mut nodes, 0, url.clone(), &config, Some((&digest, &mut tally)))?;
    }
    assert_eq!((tally.queries, tally.in_peer, tally.yes), (3, 2, 2));
    assert_eq!((tally.false_positives, tally.false_negatives), (0, 0));
    assert_eq!(tally.stale_no, 1, "the digest said no for a URL the peer held when asked");
    assert_eq!(tally.stale_yes, 1, "the digest said yes for a URL the peer had evicted");
    assert_eq!(tally.peer_held_now, 2);
    assert_eq!(nodes[0].peer_hits, 1, "only the URL held at the exchange and still cached");
    Ok(())
}

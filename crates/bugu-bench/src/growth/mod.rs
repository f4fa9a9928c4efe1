//! The `growth` benchmark's pieces: its rows ([`rows`]), the per-insert profile of a growing
//! filter ([`profile`]), the ratio curve over sizes ([`curve`]) and the SVG chart it draws
//! ([`svg`]).

pub mod curve;
pub mod profile;
pub mod rows;
pub mod svg;

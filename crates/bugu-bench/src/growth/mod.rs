//! The `growth` benchmark's pieces: its rows ([`rows`]), the per-insert profile of a growing
//! filter ([`profile`]), and the ratio curve over sizes and its chart ([`curve`]).

pub mod curve;
pub mod profile;
pub mod rows;

//! Fuzz target: any bytes as a REST request's path, query string and headers, and as each
//! parameter on its own (filters, logic trees, select, order, columns); nothing may panic, and
//! an error is always PostgREST's shape with a PGRST code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_rest::request;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, '\n');
    let path = parts.next().unwrap_or_default();
    let query = parts.next().unwrap_or_default();
    let prefer = parts.next().unwrap_or_default();
    let accept = parts.next().unwrap_or_default();
    let mut headers = http::HeaderMap::new();
    for (name, value) in [("prefer", prefer), ("accept", accept), ("range", prefer)] {
        if let Ok(value) = http::HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    }
    let path = format!("/{path}");
    for method in [http::Method::GET, http::Method::POST] {
        if let Err(error) = request::parse_request(&method, &path, Some(query), &headers) {
            assert!(error.code.starts_with("PGRST"), "{error:?}");
        }
    }
    let (key, value) = query.split_once('=').unwrap_or((query, ""));
    for result in [
        request::parse_filter(key, value).map(drop),
        request::parse_logic(key, value).map(drop),
        request::parse_select(value).map(drop),
        request::parse_order(value).map(drop),
        request::parse_columns(value).map(drop),
    ] {
        if let Err(error) = result {
            assert_eq!(error.code, "PGRST100", "{error:?}");
        }
    }
});

//! Geohash math as Redis computes it: 52-bit interleaved hashes over the Mercator-safe
//! latitude range, the haversine distance on Redis's earth radius, and the 3x3 grid of cells a
//! radius or box search scans (so results and their order match redis-server's).

/// The southernmost latitude GEOADD accepts (the limit of the Web Mercator projection).
pub const LAT_MIN: f64 = -85.051_128_78;
/// The northernmost latitude GEOADD accepts.
pub const LAT_MAX: f64 = 85.051_128_78;
/// The westernmost longitude.
pub const LONG_MIN: f64 = -180.0;
/// The easternmost longitude.
pub const LONG_MAX: f64 = 180.0;
/// Bits per coordinate of a full-precision hash (26, so a hash has 52 bits).
pub const STEP_MAX: u8 = 26;
const EARTH_RADIUS: f64 = 6_372_797.560_856;
const MERCATOR_MAX: f64 = 20_037_726.37;
const D_R: f64 = std::f64::consts::PI / 180.0;

/// A geohash cell: `bits` holds `step * 2` interleaved bits (latitude in the even ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cell {
    /// The interleaved hash bits.
    pub bits: u64,
    /// Bits per coordinate, the cell's precision (at most [`STEP_MAX`]).
    pub step: u8,
}

impl Cell {
    fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Range {
    min: f64,
    max: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Area {
    lat: Range,
    lon: Range,
}

fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

fn squeeze(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

fn encode_in(lon_r: Range, lat_r: Range, lon: f64, lat: f64, step: u8) -> Option<Cell> {
    if step == 0
        || step > 32
        || !(LONG_MIN..=LONG_MAX).contains(&lon)
        || !(LAT_MIN..=LAT_MAX).contains(&lat)
    {
        return None;
    }
    if lat < lat_r.min || lat > lat_r.max || lon < lon_r.min || lon > lon_r.max {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_off = (lat - lat_r.min) / (lat_r.max - lat_r.min) * scale;
    let lon_off = (lon - lon_r.min) / (lon_r.max - lon_r.min) * scale;
    // C converts the offsets to uint32 by truncation.
    Some(Cell {
        bits: spread(lat_off as u32) | (spread(lon_off as u32) << 1),
        step,
    })
}

fn wgs84() -> (Range, Range) {
    (
        Range {
            min: LONG_MIN,
            max: LONG_MAX,
        },
        Range {
            min: LAT_MIN,
            max: LAT_MAX,
        },
    )
}

/// The cell of a point at `step`.
pub fn encode(lon: f64, lat: f64, step: u8) -> Option<Cell> {
    let (lon_r, lat_r) = wgs84();
    encode_in(lon_r, lat_r, lon, lat, step)
}

/// The 52-bit score GEOADD stores.
pub fn score_of(lon: f64, lat: f64) -> Option<f64> {
    encode(lon, lat, STEP_MAX).map(|c| align52(c) as f64)
}

fn align52(c: Cell) -> u64 {
    c.bits << (52 - u32::from(c.step) * 2)
}

fn decode(c: Cell) -> Option<Area> {
    if c.is_zero() {
        return None;
    }
    let (lon_r, lat_r) = wgs84();
    let lat_i = squeeze(c.bits);
    let lon_i = squeeze(c.bits >> 1);
    let scale = (1u64 << c.step) as f64;
    Some(Area {
        lat: Range {
            min: lat_r.min + (f64::from(lat_i) / scale) * (lat_r.max - lat_r.min),
            max: lat_r.min + ((f64::from(lat_i) + 1.0) / scale) * (lat_r.max - lat_r.min),
        },
        lon: Range {
            min: lon_r.min + (f64::from(lon_i) / scale) * (lon_r.max - lon_r.min),
            max: lon_r.min + ((f64::from(lon_i) + 1.0) / scale) * (lon_r.max - lon_r.min),
        },
    })
}

/// The (longitude, latitude) a stored score stands for: the centre of its cell.
pub fn point_of(score: f64) -> Option<(f64, f64)> {
    let area = decode(Cell {
        bits: score as u64,
        step: STEP_MAX,
    })?;
    let lon = ((area.lon.min + area.lon.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.lat.min + area.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    Some((lon, lat))
}

/// GEOHASH's 11-character standard geohash of a stored score (re-encoded over -90..90).
pub fn hash_string(score: f64) -> Option<String> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = point_of(score)?;
    let lon_r = Range {
        min: -180.0,
        max: 180.0,
    };
    let lat_r = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode_in(lon_r, lat_r, lon, lat, 26).map_or(0, |c| c.bits);
    Some(
        (0..11)
            .map(|i| {
                let idx = if i == 10 {
                    0
                } else {
                    ((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize
                };
                ALPHABET[idx] as char
            })
            .collect(),
    )
}

fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS * ((lat2 * D_R) - (lat1 * D_R)).abs()
}

/// Haversine distance in meters.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = lon1 * D_R;
    let lon2r = lon2 * D_R;
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = lat1 * D_R;
    let lat2r = lat2 * D_R;
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS * a.sqrt().asin()
}

/// A search shape around a centre, sizes already in meters.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A circle of this radius (GEORADIUS, GEOSEARCH BYRADIUS).
    Radius(f64),
    /// Width and height.
    Box(f64, f64),
}

/// The distance of a point from the centre if it lies within the shape.
pub fn within(center: (f64, f64), shape: Shape, point: (f64, f64)) -> Option<f64> {
    let (x1, y1) = center;
    let (x2, y2) = point;
    match shape {
        Shape::Radius(r) => {
            let d = distance(x1, y1, x2, y2);
            (d <= r).then_some(d)
        }
        Shape::Box(w, h) => {
            if lat_distance(y2, y1) > h / 2.0 {
                return None;
            }
            if distance(x2, y2, x1, y2) > w / 2.0 {
                return None;
            }
            Some(distance(x1, y1, x2, y2))
        }
    }
}

fn steps_for_radius(mut range: f64, lat: f64) -> u8 {
    if range == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

fn move_x(c: &mut Cell, d: i8) {
    if d == 0 {
        return;
    }
    let shift = 64 - u32::from(c.step) * 2;
    let mut x = c.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = c.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64.checked_shr(shift).unwrap_or(0);
    if d > 0 {
        x = x.wrapping_add(zz.wrapping_add(1));
    } else {
        x |= zz;
        x = x.wrapping_sub(zz.wrapping_add(1));
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64.checked_shr(shift).unwrap_or(0);
    c.bits = x | y;
}

fn move_y(c: &mut Cell, d: i8) {
    if d == 0 {
        return;
    }
    let shift = 64 - u32::from(c.step) * 2;
    let x = c.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = c.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64.checked_shr(shift).unwrap_or(0);
    if d > 0 {
        y = y.wrapping_add(zz.wrapping_add(1));
    } else {
        y |= zz;
        y = y.wrapping_sub(zz.wrapping_add(1));
    }
    y &= 0x5555_5555_5555_5555u64.checked_shr(shift).unwrap_or(0);
    c.bits = x | y;
}

fn neighbour(c: Cell, dx: i8, dy: i8) -> Cell {
    let mut n = c;
    move_x(&mut n, dx);
    move_y(&mut n, dy);
    n
}

/// The score ranges `[min, max)` to scan for a search, in Redis's order (centre, N, S, E, W,
/// NE, NW, SE, SW), with cells the shape cannot reach and repeats left out.
pub fn search_ranges(center: (f64, f64), shape: Shape) -> Vec<(f64, f64)> {
    let (lon, lat) = center;
    let (half_h, half_w, radius) = match shape {
        Shape::Radius(r) => (r, r, r),
        Shape::Box(w, h) => (
            h / 2.0,
            w / 2.0,
            ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        ),
    };
    let lat_delta = (half_h / EARTH_RADIUS) / D_R;
    let lon_delta_top = (half_w / EARTH_RADIUS / ((lat + lat_delta) * D_R).cos()) / D_R;
    let lon_delta_bottom = (half_w / EARTH_RADIUS / ((lat - lat_delta) * D_R).cos()) / D_R;
    let south = lat < 0.0;
    let min_lon = if south {
        lon - lon_delta_bottom
    } else {
        lon - lon_delta_top
    };
    let max_lon = if south {
        lon + lon_delta_bottom
    } else {
        lon + lon_delta_top
    };
    let (min_lat, max_lat) = (lat - lat_delta, lat + lat_delta);

    let mut steps = steps_for_radius(radius, lat);
    let Some(mut hash) = encode(lon, lat, steps) else {
        return Vec::new();
    };
    let grid = |h: Cell| {
        [
            neighbour(h, 0, 1),
            neighbour(h, 0, -1),
            neighbour(h, 1, 0),
            neighbour(h, -1, 0),
        ]
    };
    let decrease = {
        let [n, s, e, w] = grid(hash).map(decode);
        n.is_some_and(|a| a.lat.max < max_lat)
            || s.is_some_and(|a| a.lat.min > min_lat)
            || e.is_some_and(|a| a.lon.max < max_lon)
            || w.is_some_and(|a| a.lon.min > min_lon)
    };
    if steps > 1 && decrease {
        steps -= 1;
        match encode(lon, lat, steps) {
            Some(h) => hash = h,
            None => return Vec::new(),
        }
    }
    // north, south, east, west, north_east, north_west, south_east, south_west
    let mut cells = [
        hash,
        neighbour(hash, 0, 1),
        neighbour(hash, 0, -1),
        neighbour(hash, 1, 0),
        neighbour(hash, -1, 0),
        neighbour(hash, 1, 1),
        neighbour(hash, -1, 1),
        neighbour(hash, 1, -1),
        neighbour(hash, -1, -1),
    ];
    let zero = Cell::default();
    if steps >= 2
        && let Some(area) = decode(hash)
    {
        if area.lat.min < min_lat {
            cells[2] = zero;
            cells[8] = zero;
            cells[7] = zero;
        }
        if area.lat.max > max_lat {
            cells[1] = zero;
            cells[5] = zero;
            cells[6] = zero;
        }
        if area.lon.min < min_lon {
            cells[4] = zero;
            cells[8] = zero;
            cells[6] = zero;
        }
        if area.lon.max > max_lon {
            cells[3] = zero;
            cells[7] = zero;
            cells[5] = zero;
        }
    }
    let mut ranges = Vec::with_capacity(9);
    // Like Redis, a cell equal to the last one scanned is skipped, except after the centre.
    let mut last = 0usize;
    for (i, c) in cells.iter().enumerate() {
        if c.is_zero() {
            continue;
        }
        if last != 0 && cells[last] == *c {
            continue;
        }
        let min = align52(*c) as f64;
        let max = align52(Cell {
            bits: c.bits.wrapping_add(1),
            step: c.step,
        }) as f64;
        ranges.push((min, max));
        last = i;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palermo_and_catania_as_redis_reports_them() {
        // GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
        let p = score_of(13.361389, 38.115556).unwrap();
        let c = score_of(15.087269, 37.502669).unwrap();
        assert_eq!(p, 3479099956230698.0);
        assert_eq!(c, 3479447370796909.0);
        let (plon, plat) = point_of(p).unwrap();
        let (clon, clat) = point_of(c).unwrap();
        let d = distance(plon, plat, clon, clat);
        assert!((d - 166274.1516).abs() < 0.0001, "{d}");
        assert_eq!(hash_string(p).unwrap(), "sqc8b49rny0");
        assert_eq!(hash_string(c).unwrap(), "sqdtr74hyu0");
        assert!(!search_ranges((15.0, 37.0), Shape::Radius(200_000.0)).is_empty());
    }
}

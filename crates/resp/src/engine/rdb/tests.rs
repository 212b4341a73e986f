//! Tests of the DUMP codec: payloads redis-server 7.0.15 wrote, round trips, and refusals.

use proptest::prelude::*;

use super::*;
use crate::engine::stream::StreamId;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn strings(v: &Value) -> Vec<Vec<u8>> {
    match v {
        Value::Str(s) => vec![s.to_vec()],
        Value::List(l) => l.iter().map(|k| k.to_vec()).collect(),
        Value::Set(s) => {
            let mut m: Vec<Vec<u8>> = s.iter().map(|k| k.to_vec()).collect();
            m.sort();
            m
        }
        Value::Hash(h) => h
            .iter()
            .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
            .collect(),
        Value::ZSet(z) => z
            .iter()
            .flat_map(|(m, s)| [m.to_vec(), s.to_string().into_bytes()])
            .collect(),
        Value::Stream(s) => {
            let mut items = Vec::new();
            s.walk(StreamId::MIN, StreamId::MAX, false, |e| {
                items.push(e.id.to_bytes());
                items.extend(e.fields().flat_map(|(f, v)| [f.to_vec(), v.to_vec()]));
                true
            });
            items
        }
    }
}

fn texts(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// DUMP replies of redis-server 7.0.15 (`SET s hello`, `SET n 12345`, a 400-byte string it
/// compressed with LZF, `RPUSH l a b 1 -5 300`, `SADD si 1 2 3`, `SADD ss a b c`,
/// `HSET h f v n 7`, `ZADD z 1.5 a 2 b`).
#[test]
fn reads_what_redis_7_0_dumps() {
    let cases: [(&str, Vec<Vec<u8>>); 8] = [
        ("000568656c6c6f0a006372df766534200a", texts(&["hello"])),
        ("00c139300a009d94ea2793fc08b9", texts(&["12345"])),
        (
            "00c30d419002616261e0ff01e07a010161620a003f03619433dd8d9a",
            vec!["ab".repeat(200).into_bytes()],
        ),
        (
            "120102151500000005008161028162020101dffb02c12c02ff0a006be158a1e865c788",
            texts(&["a", "b", "1", "-5", "300"]),
        ),
        (
            "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b",
            texts(&["1", "2", "3"]),
        ),
        (
            "02030162016101630a0099cc80dd5982d255",
            texts(&["a", "b", "c"]),
        ),
        (
            "1012120000000400816602817602816e020701ff0a00b82adea8407ffaa8",
            texts(&["f", "v", "n", "7"]),
        ),
        (
            "111414000000040081610283312e35048162020201ff0a00fa02b425af188763",
            texts(&["a", "1.5", "b", "2"]),
        ),
    ];
    for (payload, expected) in cases {
        let value = restore(&hex(payload)).unwrap_or_else(|e| panic!("{payload}: {e:?}"));
        assert_eq!(strings(&value), expected, "{payload}");
    }
}

#[test]
fn writes_what_redis_writes_for_a_plain_string() {
    // Byte for byte what redis-server dumps for `SET s hello`.
    let dumped = dump(&Value::Str(b"hello".into()));
    assert_eq!(dumped, hex("000568656c6c6f0a006372df766534200a"));
}

#[test]
fn bad_footers_and_bodies_are_refused() {
    let good = hex("000568656c6c6f0a006372df766534200a");
    let mut flipped = good.clone();
    flipped[3] ^= 1;
    assert!(matches!(restore(&flipped), Err(RdbError::Footer)));
    assert!(matches!(
        restore(&good[..good.len() - 1]),
        Err(RdbError::Footer)
    ));
    assert!(matches!(restore(&good[..5]), Err(RdbError::Footer)));
    assert!(matches!(restore(b""), Err(RdbError::Footer)));
    // A newer format version.
    let mut newer = good[..good.len() - 10].to_vec();
    newer.extend_from_slice(&11u16.to_le_bytes());
    let crc = crc64(&newer);
    newer.extend_from_slice(&crc.to_le_bytes());
    assert!(matches!(restore(&newer), Err(RdbError::Footer)));
    // A good footer over a body that does not decode: a set claiming 1,000,000 members.
    let mut body = vec![TYPE_SET, 0x80, 0x00, 0x0f, 0x42, 0x40, 0x01, b'a'];
    body.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    assert!(matches!(restore(&body), Err(RdbError::Format(_))));
    assert_eq!(
        RdbError::Footer.to_string(),
        "ERR DUMP payload version or checksum are wrong"
    );
    assert_eq!(RdbError::Format("x").to_string(), "ERR Bad data format");
}

#[test]
fn crc_is_redis_crc64_jones() {
    assert_eq!(crc64(b"123456789"), 0xe9c6d914c4b8d9ca);
}

fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..30),
        1 => prop::collection::vec(any::<u8>(), 0..5000),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        arb_bytes().prop_map(|b| Value::Str(b.into())),
        prop::collection::vec(arb_bytes(), 1..200).prop_map(list),
        prop::collection::hash_set(arb_bytes(), 1..200)
            .prop_map(|items| set(items.into_iter().collect()).unwrap()),
        prop::collection::hash_map(arb_bytes(), arb_bytes(), 1..100)
            .prop_map(|m| { hash(m.into_iter().flat_map(|(k, v)| [k, v]).collect()).unwrap() }),
        prop::collection::hash_map(arb_bytes(), -1e300f64..1e300, 1..100)
            .prop_map(|m| zset(m.into_iter().collect()).unwrap()),
        prop::collection::vec(
            (
                1u64..3,
                0u64..4,
                prop::collection::vec((arb_bytes(), arb_bytes()), 1..4)
            ),
            0..300
        )
        .prop_map(stream_of),
    ]
}

/// Field/value pairs of a generated stream entry.
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// A stream whose IDs step by the given millisecond and sequence gaps.
fn stream_of(steps: Vec<(u64, u64, Pairs)>) -> Value {
    use crate::engine::stream::{IdSpec, NodeLimits, Stream};
    let mut s = Stream::default();
    let mut id = StreamId::new(1, 0);
    for (ms, seq, fields) in steps {
        id = StreamId::new(id.ms + ms - 1, if ms > 1 { seq } else { id.seq + seq + 1 });
        let pairs: Vec<(&[u8], &[u8])> = fields
            .iter()
            .map(|(f, v)| (f.as_slice(), v.as_slice()))
            .collect();
        s.append(IdSpec::Exact(id), &pairs, NodeLimits::default(), 0)
            .unwrap();
    }
    Value::Stream(Box::new(s))
}

proptest! {
    #[test]
    fn dump_then_restore_gives_the_value_back(value in arb_value()) {
        let payload = dump(&value);
        let back = restore(&payload).unwrap();
        prop_assert_eq!(back.type_name(), value.type_name());
        prop_assert_eq!(strings(&back), strings(&value));
    }

    /// Any corruption of a payload is refused, never a panic.
    #[test]
    fn corrupted_payloads_are_refused(value in arb_value(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut payload = dump(&value);
        let i = at.index(payload.len());
        payload[i] ^= 1 << bit;
        prop_assert!(restore(&payload).is_err());
    }

    /// Arbitrary bodies behind a valid footer decode or fail cleanly.
    #[test]
    fn arbitrary_bodies_do_not_panic(body in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut payload = body;
        payload.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64(&payload);
        payload.extend_from_slice(&crc.to_le_bytes());
        let _ = restore(&payload);
    }
}

#[test]
fn listpacks_round_trip_with_long_entries() {
    let items: Vec<Vec<u8>> = [0usize, 1, 63, 64, 4095, 4096, 20000]
        .iter()
        .map(|n| vec![b'x'; *n])
        .collect();
    let lp = packed::write_listpack(items.iter().map(Vec::as_slice));
    assert_eq!(packed::listpack(&lp).unwrap(), items);
}

/// What redis-server 7.0.15 dumped for `XADD s 1-1 name ann age 30`, `XADD s 1-2 name bob age 7`,
/// `XADD s 2-0 other x`, `XDEL s 1-2`, `XGROUP CREATE s g 0`, `XREADGROUP GROUP g alice COUNT 1
/// STREAMS s >`: one listpack with a deleted entry, a group with one pending entry.
const REDIS_STREAM: &str = "13011000000000000000010000000000000001404d4d0000001900020101010201846e616d65058361676504000102010001000183616e6e041e01050103010001010183626f62040701050100010101dfff020101856f74686572068178020601ff0202000101010203010167010181ffffffffffffffff0100000000000000010000000000000001b08be222a2010000010105616c696365b08be222a201000001000000000000000100000000000000010a0072311088f850a34a";

fn entries(s: &crate::engine::stream::Stream) -> Vec<String> {
    use crate::engine::stream::StreamId;
    let mut out = Vec::new();
    s.walk(StreamId::MIN, StreamId::MAX, false, |e| {
        let fields: Vec<String> = e
            .fields()
            .map(|(f, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(f),
                    String::from_utf8_lossy(v)
                )
            })
            .collect();
        out.push(format!("{}-{} {}", e.id.ms, e.id.seq, fields.join(",")));
        true
    });
    out
}

fn check_redis_stream(value: &Value) {
    use crate::engine::stream::StreamId;
    let Value::Stream(s) = value else {
        panic!("not a stream")
    };
    assert_eq!(entries(s), ["1-1 name=ann,age=30", "2-0 other=x"]);
    assert_eq!(s.length, 2);
    assert_eq!(s.last_id, StreamId::new(2, 0));
    assert_eq!(s.first_id, StreamId::new(1, 1));
    assert_eq!(s.max_deleted_id, StreamId::new(1, 2));
    assert_eq!(s.entries_added, 3);
    let group = &s.groups[b"g".as_slice()];
    assert_eq!(group.last_id, StreamId::new(1, 1));
    assert_eq!(group.entries_read, -1);
    let nack = &group.pel[&StreamId::new(1, 1)];
    assert_eq!(nack.consumer.as_slice(), b"alice");
    assert_eq!(nack.delivery_time, 1_795_881_601_968);
    assert_eq!(nack.delivery_count, 1);
    let alice = &group.consumers[b"alice".as_slice()];
    assert_eq!(alice.seen_time, 1_795_881_601_968);
    assert_eq!(alice.pel.len(), 1);
}

#[test]
fn streams_read_as_redis_wrote_them_and_round_trip() {
    let value = restore(&hex(REDIS_STREAM)).expect("redis's stream");
    check_redis_stream(&value);
    let again = restore(&dump(&value)).expect("our own dump");
    check_redis_stream(&again);
    // A thousand entries over several listpacks, negative sequence deltas included.
    let mut stream = crate::engine::stream::Stream::default();
    for i in 0..1000u64 {
        let value = format!("v{i}");
        let pairs: Vec<(&[u8], &[u8])> = if i % 7 == 0 {
            vec![(b"other".as_slice(), value.as_bytes())]
        } else {
            vec![
                (b"v".as_slice(), value.as_bytes()),
                (b"n".as_slice(), b"-4097"),
            ]
        };
        let id = crate::engine::stream::StreamId::new(10 + i / 3, i % 3 * 400);
        stream
            .append(
                crate::engine::stream::IdSpec::Exact(id),
                &pairs,
                crate::engine::stream::NodeLimits::default(),
                0,
            )
            .expect("ascending IDs");
    }
    let value = Value::Stream(Box::new(stream));
    let Value::Stream(back) = restore(&dump(&value)).expect("round trip") else {
        panic!("not a stream")
    };
    let Value::Stream(orig) = &value else {
        unreachable!()
    };
    assert_eq!(entries(&back), entries(orig));
    assert_eq!(back.entries_added, 1000);
}

#[test]
fn damaged_stream_payloads_are_refused_without_panicking() {
    let good = hex(REDIS_STREAM);
    let body = &good[..good.len() - 10];
    for i in 0..body.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut bad = body.to_vec();
            bad[i] ^= flip;
            let _ = restore(&with_footer(&bad));
        }
        let _ = restore(&with_footer(&body[..i]));
    }
}

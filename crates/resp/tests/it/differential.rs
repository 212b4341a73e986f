//! Differential test: the same command scripts go to a real redis-server and to Sluice; the
//! replies must be equal byte for byte (errors included). Skips when redis-server is absent.

use crate::common;

use common::{RawClient, RedisServer, Sluice, split_aggregate};

/// One script per block (blank line between blocks); each starts from FLUSHALL.
/// A line is a command; `~ ` compares the reply's elements as a multiset (unordered replies),
/// `? ` sends the command but ignores the reply. Double quotes group an argument with spaces.
const SCRIPTS: &str = r#"
PING
PING hello
PING a b
ECHO "hello world"
ECHO
SELECT 1
SET k v
GET k
SELECT 0
GET k
SELECT 16
SELECT x
DBSIZE
NOSUCHCOMMAND a b
nosuch
GET
SET a
TIME x
FLUSHDB ASYNC
FLUSHDB bogus
FUNCTION FLUSH
SCRIPT FLUSH
CONFIG GET maxmemory
CONFIG GET maxmemory-policy
CONFIG SET nosuchparam 1
CONFIG SET dir /tmp
CONFIG SET DBFILENAME x.rdb
CONFIG SET daemonize yes
CONFIG SET databases 4
CONFIG SET enable-debug-command yes
CONFIG SET enable-protected-configs yes
CONFIG SET nosuchparam 1 dir /tmp
CONFIG SET dir /tmp nosuchparam 1
CONFIG SET stream-node-max-entries x
CONFIG SET stream-node-max-entries -1
CONFIG SET proto-max-bulk-len 10
CONFIG SET lua-time-limit 1 busy-reply-threshold 2
CONFIG SET stream-node-max-entries 5 stream-node-max-entries 6
CONFIG SET stream-node-max-bytes 2kb
CONFIG GET stream-node-max-bytes
CONFIG SET stream-node-max-bytes 4096
CONFIG GET
CONFIG SET a
CONFIG FOO
CLIENT FOO
CLIENT SETNAME "a b"
CLIENT SETNAME myname
CLIENT GETNAME
SWAPDB 0 x
SWAPDB 0 99
AUTH pw
AUTH default anything
HELLO 4
HELLO x

SET k v
GET k
SET k v2 XX
GET k
SET k v3 NX
SET new v NX
SET k v GET
SET k v EX 0
SET k v EX -1
SET k v EX x
SET k v PX 100 EX 100
SET k v NX XX
SET k v KEEPTTL EX 10
SET k v EX 100
TTL k
SET k v2 KEEPTTL
TTL k
SET k v3
TTL k
SET k v bogus
SETNX k other
SETNX k2 other
SETEX k3 100 v
SETEX k3 0 v
SETEX k3 x v
PSETEX k4 100000 v
GETSET k newval
GETSET nokey v
GETDEL k
GETDEL k
GETEX k3 PERSIST
TTL k3
GETEX k3 EX 50
TTL k3
GETEX k3 BOGUS
MSET a 1 b 2 c 3
MGET a b c nokey
MSET a 1 b
MSETNX a 1 z 2
MSETNX y 1 z 2
APPEND a xyz
APPEND newkey hello
STRLEN a
STRLEN nokey
SET s "Hello World"
GETRANGE s 0 4
GETRANGE s -5 -1
GETRANGE s 5 2
GETRANGE s -1 -5
GETRANGE s 0 100
GETRANGE nokey 0 1
GETRANGE s x 1
SETRANGE s 6 Redis
GET s
SETRANGE s 20 X
GET s
SETRANGE s -1 X
SETRANGE nokey2 0 ""
EXISTS nokey2
SUBSTR s 0 3
LPUSH l a
GET l
APPEND l x
STRLEN l
GETRANGE l 0 1
SETRANGE l 0 x
GETSET l x

SET n 10
INCR n
DECR n
INCRBY n 5
DECRBY n 3
INCRBY n x
INCR nokey
SET f 1.5
INCR f
SET big 9223372036854775807
INCR big
SET small -9223372036854775808
DECR small
DECRBY n -9223372036854775808
SET sp " 1"
INCR sp
SET f 10.5
INCRBYFLOAT f 0.5
INCRBYFLOAT f 5.0e3
INCRBYFLOAT f x
INCRBYFLOAT nokey 3
INCRBYFLOAT f +inf
SET s abc
INCRBYFLOAT s 1
LPUSH l a
INCR l
INCRBYFLOAT l 1

SET a 1
SET b 2
LPUSH c x
DEL a nokey
EXISTS a b b c nokey
TYPE b
TYPE c
TYPE nokey
~ KEYS *
KEYS b*
KEYS nomatch*
RENAME b b2
GET b2
RENAME nokey x
RENAMENX b2 c
RENAMENX b2 d
RENAME d d
COPY d e
GET e
COPY d e
COPY d e REPLACE
COPY d d
COPY d e DB 99
COPY d e DB x
COPY d e BOGUS
MOVE d 1
MOVE d 0
SELECT 1
GET d
SELECT 0
EXISTS d
EXPIRE e 100
TTL e
PTTL nokey
TTL c
EXPIRE e 100 NX
EXPIRE e 200 XX
TTL e
EXPIRE e 50 GT
EXPIRE e 500 GT
TTL e
EXPIRE e 600 LT
EXPIRE e 50 LT
TTL e
EXPIRE e 10 NX XX
EXPIRE e 10 GT LT
EXPIRE e 10 BOGUS
EXPIRE e x
EXPIRE nokey 10
EXPIRE c 10 GT
EXPIRE c 10 LT
TTL c
PERSIST c
PERSIST c
TTL c
EXPIREAT e 1
EXISTS e
SET t v
PEXPIREAT t 99999999999999
EXPIRETIME t
PEXPIRETIME t
EXPIRETIME nokey
EXPIRETIME c
EXPIRE t 9223372036854775807
PEXPIRE t -1
EXISTS t
UNLINK c nokey
RANDOMKEY
DBSIZE
SCAN x
SCAN 0 COUNT 0
SCAN 0 BOGUS 1

RPUSH l a b c
LPUSH l z
LRANGE l 0 -1
LRANGE l 1 2
LRANGE l -2 -1
LRANGE l 5 10
LRANGE l x 1
LRANGE nokey 0 -1
LLEN l
LLEN nokey
LINDEX l 0
LINDEX l -1
LINDEX l 99
LSET l 0 zz
LSET l 99 x
LSET nokey 0 x
LINSERT l BEFORE b bb
LINSERT l AFTER c cc
LINSERT l AFTER nope x
LINSERT l MIDDLE b x
LINSERT nokey BEFORE a b
LRANGE l 0 -1
LPOP l
RPOP l
LPOP l 2
LPOP l 0
LPOP l -1
LPOP l x
LPOP nokey
LPOP nokey 2
LPOP l 1 2
LPUSHX nokey a
RPUSHX l y
RPUSH r 1 2 1 3 1 4
LREM r 2 1
LRANGE r 0 -1
LREM r -1 1
LREM r 0 4
LRANGE r 0 -1
RPUSH t a b c d e
LTRIM t 1 -2
LRANGE t 0 -1
LTRIM t 5 10
EXISTS t
RPUSH p a b c 1 2 3 c c
LPOS p c
LPOS p c RANK 2
LPOS p c RANK -1
LPOS p c COUNT 2
LPOS p c COUNT 0
LPOS p c RANK -1 COUNT 2
LPOS p c MAXLEN 1
LPOS p x
LPOS p x COUNT 1
LPOS p c RANK 0
LPOS p c COUNT -1
LPOS p c MAXLEN -1
LPOS p c BOGUS 1
RPUSH src 1 2 3
RPOPLPUSH src dst
LMOVE src dst LEFT RIGHT
LMOVE src dst UP DOWN
LRANGE dst 0 -1
LMOVE src src LEFT RIGHT
LRANGE src 0 -1
RPOPLPUSH nokey dst
SET str x
RPOPLPUSH src str
LMOVE str src LEFT LEFT
BLPOP nokey 0.01
BRPOP nokey 0.01
BLPOP src 0
BLPOP src x
BLPOP src -1
BLMOVE nokey dst LEFT LEFT 0.01
RPUSH src 9
BRPOPLPUSH src dst 0
LRANGE dst 0 -1
BLPOP str 0

HSET h f1 v1 f2 v2
HSET h f1 x
HSET h f3
HMSET h f4 v4
HGET h f1
HGET h nope
HGET nokey f
HMGET h f1 nope f2
HMGET nokey a b
HGETALL h
HKEYS h
HVALS h
HLEN h
HLEN nokey
HEXISTS h f1
HEXISTS h nope
HSTRLEN h f2
HDEL h f1 nope
HDEL h f2 f4
HGETALL h
HSETNX h f3 new
HSETNX h f5 new
HINCRBY h n 5
HINCRBY h n -10
HINCRBY h f5 1
HINCRBY h n x
HINCRBYFLOAT h fl 2.5
HINCRBYFLOAT h fl 1
HINCRBYFLOAT h f5 1
HGETALL h
HGETALL nokey
HSCAN h 0
HSCAN h 0 MATCH f*
HSCAN nokey 0
HRANDFIELD nokey
HRANDFIELD nokey 3
SET s x
HGET s f
HSET s f v
HRANDFIELD h 0

SADD s a b c
SADD s a d
SREM s a nope
SCARD s
SISMEMBER s b
SISMEMBER s a
SMISMEMBER s a b nope
~ SMEMBERS s
SMEMBERS nokey
SCARD nokey
SADD t c d e
~ SINTER s t
~ SUNION s t
~ SDIFF s t
SINTER s nokey
SINTERSTORE dst s t
~ SMEMBERS dst
SUNIONSTORE dst s t
SDIFFSTORE dst s t
SINTERSTORE dst s nokey
EXISTS dst
SINTERCARD 2 s t
SINTERCARD 2 s t LIMIT 1
SINTERCARD 0 s
SINTERCARD 3 s t
SINTERCARD 2 s t LIMIT -1
SMOVE s t b
SMOVE s t nope
SISMEMBER t b
SPOP nokey
SPOP nokey 2
SPOP s 0
SPOP s -1
SPOP s x
SRANDMEMBER nokey
SRANDMEMBER nokey 5
SRANDMEMBER s 0
SADD i 3 1 2
SMEMBERS i
SSCAN i 0
SADD i 10 -5
SMEMBERS i
SADD j 2 3 4
~ SINTER i j
? SRANDMEMBER i -3
? SPOP i 2
SCARD i
SET str x
SADD str a
SINTER s str
SMOVE s str a
SMOVE str s a

ZADD z 1 a 2 b 3 c
ZADD z 10 a
ZADD z NX 20 a 4 d
ZADD z XX 5 d 6 e
ZADD z CH 6 d 7 f
ZADD z INCR 1 a
ZADD z INCR 1 a 2 b
ZADD z NX XX 1 a
ZADD z GT LT 1 a
ZADD z NX GT 1 a
ZADD z GT 1 a
ZADD z LT 1 a
ZADD z GT CH 100 a
ZADD z x a
ZADD z 1
ZADD z 1 a 2
ZADD nokey XX 1 a
EXISTS nokey
ZADD z XX INCR 1 nope
ZSCORE z a
ZSCORE z nope
ZMSCORE z a nope b
ZCARD z
ZCARD nokey
ZINCRBY z 2.5 b
ZINCRBY z x b
ZRANGE z 0 -1
ZRANGE z 0 -1 WITHSCORES
ZRANGE z 1 2 REV
ZRANGE z -2 -1 WITHSCORES
ZRANGE z 0 -1 LIMIT 0 1
ZRANGE z (1 10 BYSCORE
ZRANGE z 10 (1 BYSCORE REV WITHSCORES
ZRANGE z -inf +inf BYSCORE LIMIT 1 2
ZRANGE z x 10 BYSCORE
ZRANGE z 0 -1 BOGUS
ZRANGEBYSCORE z 2 5
ZRANGEBYSCORE z -inf +inf WITHSCORES LIMIT 1 1
ZREVRANGEBYSCORE z +inf 5 WITHSCORES
ZREVRANGE z 0 1 WITHSCORES
ZCOUNT z 2 5
ZCOUNT z (2 (5
ZCOUNT z a b
ZRANK z a
ZRANK z c
ZREVRANK z c
ZRANK z nope
ZRANK nokey a
ZREM z c nope
ZPOPMIN z
ZPOPMAX z
ZPOPMIN z 2
ZPOPMIN z -1
ZPOPMIN z x
ZPOPMIN nokey
ZRANGE z 0 -1 WITHSCORES
ZADD lex 0 a 0 b 0 c 0 d 0 e
ZRANGEBYLEX lex [b (d
ZRANGEBYLEX lex - +
ZREVRANGEBYLEX lex + [c LIMIT 0 2
ZRANGE lex [b [d BYLEX
ZRANGE lex (b + BYLEX REV
ZRANGE lex [b [d BYLEX WITHSCORES
ZRANGEBYLEX lex b d
ZLEXCOUNT lex [b +
ZREMRANGEBYRANK lex 0 1
ZRANGE lex 0 -1
ZADD sc 1 a 2 b 3 c 4 d
ZREMRANGEBYSCORE sc 2 3
ZRANGE sc 0 -1 WITHSCORES
ZSCAN sc 0
ZRANDMEMBER nokey
ZRANDMEMBER nokey 3
ZRANDMEMBER sc 0
ZRANDMEMBER sc x
ZADD fl 1.5 a 0.25 b -3 c 1e3 d inf e -inf f
ZRANGE fl 0 -1 WITHSCORES
ZSCORE fl e
SET str x
ZADD str 1 a
ZSCORE str a
ZRANGE str 0 -1

MULTI
SET a 1
INCR a
GET a
EXEC
MULTI
MULTI
DISCARD
DISCARD
EXEC
MULTI
SET a
NOSUCH
EXEC
MULTI
SET a x
INCR a
GET a
EXEC
WATCH a
SET a changed
MULTI
GET a
EXEC
WATCH a
MULTI
WATCH b
GET a
EXEC
UNWATCH
MULTI
BLPOP nolist 0
EXEC

PUBLISH chan hello
PUBSUB CHANNELS
PUBSUB NUMSUB chan other
PUBSUB NUMPAT
PUBSUB BOGUS
UNSUBSCRIBE
PUNSUBSCRIBE
SUBSCRIBE a b
PING
PING x
GET a
UNSUBSCRIBE a
PSUBSCRIBE p*
PUNSUBSCRIBE
UNSUBSCRIBE
GET a

HELLO 3
? HELLO 3
PING
GET nokey
SET k v
GET k
HSET h a 1 b 2
HGETALL h
ZADD z 1.5 a 2 b
ZSCORE z a
ZRANGE z 0 -1 WITHSCORES
ZPOPMIN z 1
ZADD z 3 c
ZPOPMIN z
ZINCRBY z 1 c
ZMSCORE z c nope
SADD s a
SMEMBERS s
SPOP s 0
LPOP nokey 2
BLPOP nokey 0.01
HRANDFIELD h 0 WITHVALUES
CONFIG GET maxmemory
ZADD r 1 a 2 b 3 c
ZRANGE r 0 -1 REV WITHSCORES
ZRANGEBYSCORE r 1 2 WITHSCORES
ZSCAN r 0
ZRANDMEMBER nokey
ZRANDMEMBER nokey 2
ZRANDMEMBER r 0 WITHSCORES
ZRANDMEMBER r 1 BOGUS
MULTI
INCR cnt
ZSCORE r a
HGETALL h
EXEC
CLIENT GETNAME
~ CONFIG GET maxmemory hz
TYPE r
TTL r
SMISMEMBER s a b
SET f 1.5
INCRBYFLOAT f 1
SCAN 0 TYPE hash
LPOS nokey a COUNT 0
HMGET h a nope
PUBSUB NUMSUB ch
SUBSCRIBE ch
GET nokey
UNSUBSCRIBE ch

XADD s 1-1 a 1 b 2
XADD s 1-2 a 3 b 4
XADD s 1-* a 5
XADD s 2 c 6
XADD s 1-5 x y
XADD s 0-0 x y
XADD s 3-0 f
XADD s 3-0
XADD s NOMKSTREAM 5-0 k v
XADD nostream NOMKSTREAM * k v
EXISTS nostream
XADD s bad-id k v
XADD s MAXLEN -1 * k v
XADD s MAXLEN 1 MINID 1 * k v
XADD s LIMIT 10 * k v
XADD s MAXLEN 10 LIMIT 10 * k v
XLEN s
XLEN nokey
XRANGE s - +
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -1
XRANGE s (1-1 +
XRANGE s - (2-0
XRANGE s 1 1
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XRANGE s x +
XRANGE s - + BOGUS
XREVRANGE s + -
XREVRANGE s + - COUNT 1
XREVRANGE s (2-0 -
XDEL s 1-2 9-9
XDEL s bad
XRANGE s - +
XLEN s
XTRIM s MAXLEN 1
XTRIM s MAXLEN ~ 0
XTRIM s
XTRIM s MAXLEN 1 LIMIT 5
XRANGE s - +
XSETID s 1-0
XSETID s 10-0
XADD s 5-0 k v
XSETID s 20-0 ENTRIESADDED 0
XSETID s 20-0 ENTRIESADDED 100 MAXDELETEDID 25-0
XSETID s 20-0 ENTRIESADDED 100 MAXDELETEDID 15-0
XSETID nokey 1-0
XINFO STREAM s
XINFO STREAM s FULL
XINFO STREAM nokey
XINFO BOGUS s
SET str v
XADD str * k v
XRANGE str - +
XLEN str
XREAD STREAMS s
XREAD COUNT 1 STREAMS s 0-0
XREAD STREAMS s nokey 0 0
XREAD STREAMS s $
XREAD STREAMS s >
XREAD GROUP g c STREAMS s 0
XREAD NOACK STREAMS s 0
XREAD BLOCK -1 STREAMS s 0
XREAD BLOCK x STREAMS s 0
XREAD STREAMS str 0
XREAD BLOCK 10 STREAMS s $
MULTI
XREAD BLOCK 0 STREAMS s $
EXEC

XADD q 1-0 f 1
XADD q 2-0 f 2
XADD q 3-0 f 3
XGROUP CREATE q g 0
XGROUP CREATE q g 0
XGROUP CREATE nokey g 0
XGROUP CREATE nokey g $ MKSTREAM
XGROUP CREATE q g2 $ ENTRIESREAD -5
XGROUP CREATE q g3 bad
XGROUP CREATECONSUMER q g alice
XGROUP CREATECONSUMER q g alice
XGROUP CREATECONSUMER q nog alice
XGROUP BOGUS q
XGROUP CREATE q
XREADGROUP GROUP g bob COUNT 2 STREAMS q >
XREADGROUP GROUP g bob STREAMS q 0
XREADGROUP GROUP g bob STREAMS q 1-0
XREADGROUP GROUP nog bob STREAMS q >
XREADGROUP GROUP g bob STREAMS q $
XREADGROUP STREAMS q >
XREADGROUP GROUP g carol NOACK STREAMS q >
XREADGROUP GROUP g bob STREAMS q >
XPENDING q g
XPENDING q g - + 10 carol
XPENDING q nog
XPENDING q g - + x
XPENDING q g x + 10
XACK q g 1-0 9-0
XACK q g 1-0
XACK q g bad
XACK q nog 1-0
XPENDING q g
XINFO GROUPS q
XGROUP SETID q g 0
XGROUP SETID q g $ ENTRIESREAD 3
XGROUP SETID q nog 0
XINFO GROUPS q
XDEL q 2-0
XREADGROUP GROUP g bob STREAMS q 0
XPENDING q g
XCLAIM q g carol 0 2-0 JUSTID
XCLAIM q g carol 0 9-0
XCLAIM q g carol x 2-0
XCLAIM q g carol 0 2-0 BOGUS
XCLAIM q nog carol 0 2-0
XPENDING q g
XAUTOCLAIM q g dave 0 0 COUNT 10 JUSTID
XAUTOCLAIM q g dave 0 0 COUNT 0
XAUTOCLAIM q nog dave 0 0
XGROUP DELCONSUMER q g dave
XGROUP DELCONSUMER q g nobody
XGROUP DESTROY q g
XGROUP DESTROY q g
XINFO GROUPS q
XINFO CONSUMERS q nog
XGROUP HELP
XINFO HELP

SETBIT b 7 1
SETBIT b 7 0
SETBIT b 100 1
GETBIT b 100
GETBIT b 99
GETBIT b 100000
GETBIT nokey 0
SETBIT b 4294967296 1
SETBIT b 4294967295 2
SETBIT b -1 1
SETBIT b x 1
GETBIT b -1
STRLEN b
BITCOUNT b
BITCOUNT b 0 -1
BITCOUNT b 0 -1 BIT
BITCOUNT b 5 100 BIT
BITCOUNT b 1 1 BYTE
BITCOUNT b 0
BITCOUNT b 0 1 BOGUS
BITCOUNT b -1 -5
BITCOUNT nokey
SET s foobar
BITCOUNT s
BITCOUNT s 1 1
BITCOUNT s 5 30 BIT
BITPOS s 1
BITPOS s 0
BITPOS s 1 2
BITPOS s 1 2 -1 BYTE
BITPOS s 0 7 15 BIT
BITPOS s 1 7 15 BIT
BITPOS s 2
BITPOS nokey 0
BITPOS nokey 1
SET ff "\xff\xff"
BITPOS ff 0
BITPOS ff 0 0 -1
SET a abc
SET c xyz
BITOP AND dest a c
GET dest
BITOP OR dest a c nokey
GET dest
BITOP XOR dest a c
GET dest
BITOP NOT dest a
GET dest
BITOP NOT dest a c
BITOP BOGUS dest a
BITOP AND dest nokey1 nokey2
EXISTS dest
LPUSH l x
BITOP AND dest l
SETBIT l 0 1
BITCOUNT l
BITFIELD bf SET i8 0 100 GET i8 0 INCRBY i8 0 100
BITFIELD bf OVERFLOW SAT INCRBY i8 0 100 OVERFLOW FAIL INCRBY i8 0 100 OVERFLOW WRAP INCRBY i8 0 100
BITFIELD bf SET u8 #1 255 INCRBY u8 #1 10 GET u4 8
BITFIELD bf OVERFLOW SAT SET u8 16 -5 OVERFLOW FAIL SET i8 16 300 GET u8 16
BITFIELD bf SET i64 0 -1 GET u63 0 INCRBY i64 0 1
BITFIELD bf GET u64 0
BITFIELD bf GET i65 0
BITFIELD bf GET x8 0
BITFIELD bf OVERFLOW BOGUS GET i8 0
BITFIELD bf GET i8
BITFIELD bf BOGUS
BITFIELD bf GET i8 -1
BITFIELD_RO bf GET i8 0 GET u16 #2
BITFIELD_RO bf SET i8 0 1
BITFIELD nokey GET u8 0
GET bf

PFADD h a b c
PFADD h a
PFADD h
PFADD h2
PFCOUNT h
PFCOUNT h h2 nokey
PFCOUNT nokey
GET h
PFMERGE m h h2
GET m
PFCOUNT m
SET notahll abc
PFADD notahll x
PFCOUNT notahll
PFCOUNT h notahll
PFMERGE m notahll
LPUSH list x
PFADD list x
PFDEBUG ENCODING h
PFDEBUG DECODE h
PFDEBUG TODENSE h
PFDEBUG ENCODING h
PFDEBUG DECODE h
PFDEBUG TODENSE h
PFDEBUG BOGUS h
PFDEBUG ENCODING nokey
PFCOUNT h
GET h
SET corrupt "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01"
PFCOUNT corrupt
PFADD corrupt x

HELLO 3
XADD s 1-1 a 1 b 2
XADD s 2-1 a 3
XRANGE s - +
XREAD STREAMS s 0
XREAD COUNT 1 STREAMS s nokey 0 0
XREAD STREAMS s $
XGROUP CREATE s g 0
XREADGROUP GROUP g c STREAMS s >
XREADGROUP GROUP g c STREAMS s 0
XINFO STREAM s
XINFO GROUPS s
XPENDING s g
XAUTOCLAIM s g d 0 0 JUSTID
XINFO CONSUMERS s nog
BITFIELD bf SET i8 0 1 OVERFLOW FAIL INCRBY i8 0 200
PFADD h a b
PFCOUNT h

GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD Sicily NX 13.361389 38.115556 Palermo 12.758489 38.788135 edge1
GEOADD Sicily XX CH 13.4 38.1 Palermo 1 1 newone
GEOADD Sicily 200 100 bad
GEOADD Sicily 13 38
GEOADD Sicily NX XX 1 1 x
GEOADD Sicily 1 x y
GEODIST Sicily Palermo Catania
GEODIST Sicily Palermo Catania km
GEODIST Sicily Palermo Catania mi
GEODIST Sicily Palermo Catania parsec
GEODIST Sicily Palermo nosuch
GEODIST nokey a b
GEOHASH Sicily Palermo Catania nosuch
GEOHASH nokey a
GEOPOS Sicily Palermo Catania nosuch
GEOPOS nokey a
GEORADIUS Sicily 15 37 200 km
GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC
GEORADIUS Sicily 15 37 200 km WITHDIST DESC COUNT 1
GEORADIUS Sicily 15 37 200 km COUNT 1 ANY
GEORADIUS Sicily 15 37 200 km ANY
GEORADIUS Sicily 15 37 200 km COUNT 0
GEORADIUS Sicily 15 37 -1 km
GEORADIUS Sicily 15 37 x km
GEORADIUS Sicily 15 37 200 km STORE dst WITHDIST
GEORADIUS Sicily 15 37 200 km STORE dst
ZRANGE dst 0 -1 WITHSCORES
GEORADIUS Sicily 15 37 200 km STOREDIST dst
ZRANGE dst 0 -1 WITHSCORES
GEORADIUS_RO Sicily 15 37 200 km STORE dst
GEORADIUSBYMEMBER Sicily Palermo 300 km WITHDIST ASC
GEORADIUSBYMEMBER Sicily nosuch 300 km
GEORADIUSBYMEMBER nokey nosuch 300 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST
GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHCOORD
GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 km
GEOSEARCH Sicily BYRADIUS 1 km
GEOSEARCH Sicily FROMLONLAT 15 37
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STORE x
GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 1 km
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 2 STOREDIST
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km WITHDIST
GEOSEARCHSTORE dst nokey FROMLONLAT 15 37 BYBOX 400 400 km
EXISTS dst
SET str v
GEOADD str 1 1 x
GEORADIUS str 1 1 1 km
GEOPOS str a

ZADD z1 1 a 2 b 3 c
ZADD z2 10 b 20 c 30 d
SADD s1 a d e
ZUNION 2 z1 z2
ZUNION 2 z1 z2 WITHSCORES
ZUNION 3 z1 z2 s1 WEIGHTS 1 2 3 AGGREGATE MAX WITHSCORES
ZUNION 2 z1 z2 AGGREGATE MIN WITHSCORES
ZINTER 2 z1 z2 WITHSCORES
ZINTER 3 z1 z2 nokey
ZDIFF 2 z1 z2 WITHSCORES
ZDIFF 2 z1 s1
ZUNION 0 z1
ZUNION 3 z1 z2
ZUNION 2 z1 z2 WEIGHTS 1
ZUNION 2 z1 z2 WEIGHTS 1 x
ZUNION 2 z1 z2 AGGREGATE avg
ZDIFF 2 z1 z2 WEIGHTS 1 1
ZUNIONSTORE out 2 z1 z2 WEIGHTS 2 3
ZRANGE out 0 -1 WITHSCORES
ZINTERSTORE out 2 z1 z2 AGGREGATE SUM
ZRANGE out 0 -1 WITHSCORES
ZDIFFSTORE out 2 z1 z1
EXISTS out
ZINTERSTORE out 2 z1 z2 WITHSCORES
ZINTERCARD 2 z1 z2
ZINTERCARD 2 z1 z2 LIMIT 1
ZINTERCARD 2 z1 z2 LIMIT -1
ZINTERCARD 0 z1
SET str v
ZUNION 2 z1 str
ZRANGESTORE out z1 0 -1
ZRANGESTORE out z1 (1 +inf BYSCORE LIMIT 0 1
ZRANGE out 0 -1 WITHSCORES
ZRANGESTORE out z1 [c [a BYLEX REV
ZRANGESTORE out nokey 0 -1
EXISTS out
ZRANGESTORE out z1 0 -1 WITHSCORES
ZADD lex 0 a 0 b 0 c 0 d 0 e
ZREMRANGEBYLEX lex [b (d
ZRANGE lex 0 -1
ZREMRANGEBYLEX lex - +
EXISTS lex
ZREMRANGEBYLEX lex x y
ZMPOP 2 nokey z1 MIN
ZMPOP 2 nokey z2 MAX COUNT 10
ZMPOP 1 nokey MIN
ZMPOP 0 z1 MIN
ZMPOP 1 z1 BOGUS
ZMPOP 1 z1 MIN COUNT 0
ZMPOP 5 z1 MIN
BZPOPMIN nokey z1 0
BZPOPMAX z1 0
BZPOPMIN z1 -1
BZMPOP 0.01 1 nokey MIN
BZPOPMIN nokey 0.01
RPUSH l1 a b c d
LMPOP 2 nokey l1 LEFT
LMPOP 1 l1 RIGHT COUNT 2
LMPOP 1 l1 LEFT COUNT 9
LMPOP 1 l1 LEFT
LMPOP 1 l1 UP
LMPOP 0 l1 LEFT
BLMPOP 0.01 1 l1 LEFT
BLMPOP x 1 l1 LEFT
LMPOP 1 str LEFT
MULTI
BLMPOP 0 1 nokey LEFT
BZPOPMIN nokey 0
EXEC

RPUSH l 3 1 2 10
SORT l
SORT l DESC
SORT l ALPHA
SORT l LIMIT 1 2
SORT l LIMIT 1 x
SORT l BY nosort
SORT l BY nosort DESC LIMIT 0 2
MSET w_3 30 w_1 10 w_2 20 w_10 0
HSET h_1 f 9 n one
HSET h_3 f 1 n three
SORT l BY w_*
SORT l BY w_* GET # GET h_*->n
SORT l BY h_*->f GET h_*->n
SORT l BY h_*->f ALPHA GET h_*->n
SORT l GET nosuch_*
SORT l STORE dst
LRANGE dst 0 -1
SORT l BY w_* GET h_*->n STORE dst
LRANGE dst 0 -1
SORT nokey STORE dst
EXISTS dst
SORT_RO l STORE dst
SORT l BOGUS
RPUSH bad 1 x
SORT bad
SORT bad ALPHA
SADD sset c a b
SORT sset ALPHA
SORT sset BY nosort STORE dst
LRANGE dst 0 -1
ZADD zs 3 c 1 a 2 b
SORT zs BY nosort
SORT zs BY nosort DESC
SORT zs ALPHA DESC LIMIT 0 2
SET str v
SORT str
COMMAND GETKEYS SORT abc STORE def
COMMAND GETKEYS XREAD COUNT 1 STREAMS a b 0 0
COMMAND GETKEYS ZUNIONSTORE d 2 a b
COMMAND GETKEYS GET
COMMAND GETKEYS NOSUCH a
COMMAND GETKEYS PING
COMMAND GETKEYS PING x
COMMAND GETKEYS GET a b
COMMAND GETKEYSANDFLAGS set k1 v1
COMMAND GETKEYSANDFLAGS set k1 v1 get
COMMAND GETKEYSANDFLAGS mset k1 v1 k2 v2
COMMAND GETKEYSANDFLAGS LMOVE k1 k2 left right
COMMAND GETKEYSANDFLAGS sort k1 store k2
COMMAND GETKEYSANDFLAGS sort_ro k1 by x get y
COMMAND GETKEYSANDFLAGS bitfield k get u8 0
COMMAND GETKEYSANDFLAGS bitfield k get u8 0 set u8 0 1
COMMAND GETKEYSANDFLAGS georadius k 0 0 1 km store dst
COMMAND GETKEYSANDFLAGS xreadgroup group g c streams s1 s2 > >
COMMAND GETKEYSANDFLAGS lmpop 2 a b left
COMMAND GETKEYSANDFLAGS fcall f 2 a b x
COMMAND GETKEYSANDFLAGS get
COMMAND GETKEYS memory usage key
COMMAND GETKEYS memory nosuch key
COMMAND GETKEYS xgroup create key g $
COMMAND GETKEYS eval "return 1" 1 key
COMMAND GETKEYS eval "return 1" 0
COMMAND GETKEYS eval "return 1" 5 key
COMMAND GETKEYS lcs k1 k2
COMMAND GETKEYS ZUNIONSTORE d 5 a
COMMAND GETKEYS ZUNIONSTORE d -1 a
COMMAND GETKEYS OBJECT FREQ k
COMMAND INFO get lmove xread xreadgroup georadius mset zunionstore
COMMAND INFO config|get client|list object|freq xinfo|stream get|key config|get|key nosuch
COMMAND INFO ping subscribe publish blpop exec watch
COMMAND COUNT x
COMMAND LIST bad_arg
COMMAND LIST filterby bad_arg
COMMAND LIST filterby bad_arg bad_arg2
COMMAND LIST filterby module nosuch
COMMAND LIST filterby aclcat nosuch
COMMAND LIST filterby pattern set
COMMAND LIST filterby pattern non_exists*
CLUSTER INFO
CLUSTER HELP
CLUSTER NODES
CLUSTER NOSUCH
CLUSTER
CLUSTER GETKEYSINSLOT 1
EVAL "return redis.pcall('cluster','reset')" 0
EVAL "return redis.pcall('cluster','info')" 0
EVAL "return redis.pcall('object','nosuch','k')" 0
EVAL "return redis.pcall('xinfo','stream')" 0
EVAL "return redis.pcall('pubsub','numpat')" 0
~ COMMAND LIST filterby pattern cl*help
~ COMMAND LIST filterby pattern config|*re*
~ COMMAND LIST filterby aclcat hyperloglog
~ COMMAND LIST filterby pattern x*
MULTI
SET a 1
SAVE
EXEC
GET a

CONFIG SET maxmemory-clients 200%
CONFIG SET maxmemory-clients 10%
CONFIG GET maxmemory-clients
CONFIG SET maxmemory-clients 0
CONFIG SET maxmemory-clients x
CONFIG SET save "100 10"
CONFIG GET save
CONFIG SET save "0 10"
CONFIG SET save "100"
CONFIG SET save ""
CONFIG SET client-output-buffer-limit "pubsub 1mb 0 0"
CONFIG GET client-output-buffer-limit
CONFIG SET client-output-buffer-limit "master 1 1 1"
CONFIG SET client-output-buffer-limit "pubsub 1 1"
CONFIG SET client-output-buffer-limit "pubsub 1 1 x"
CONFIG SET client-output-buffer-limit "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
CONFIG SET shutdown-on-sigterm "now nosave"
CONFIG GET shutdown-on-sigterm
CONFIG SET shutdown-on-sigterm "save nosave"
CONFIG SET shutdown-on-sigterm "save bogus"
CONFIG SET shutdown-on-sigterm default
CONFIG SET oom-score-adj relative
CONFIG GET oom-score-adj
CONFIG SET oom-score-adj no
CONFIG SET oom-score-adj-values "1 2"
CONFIG SET oom-score-adj-values "0 200 9000"
CONFIG SET hash-max-listpack-entries -1
CONFIG SET hash-max-ziplist-entries 100
CONFIG GET hash-max-listpack-entries
CONFIG SET hash-max-listpack-entries 512
CONFIG SET activedefrag maybe
CONFIG SET loglevel nope
CONFIG SET maxclients 0
CONFIG SET repl-backlog-size 0
CONFIG SET repl-backlog-size 10000002
CONFIG GET repl-backlog-size
CONFIG SET repl-backlog-size 1mb
CONFIG SET unixsocketperm 777
CONFIG SET replicaof "no one"
CONFIG GET key-load-delay
CONFIG GET KEY-load-delay
CONFIG SET latency-tracking-info-percentiles "50 99.90 100"
CONFIG GET latency-tracking-info-percentiles
CONFIG SET latency-tracking-info-percentiles "101"
CONFIG SET latency-tracking-info-percentiles "x"
CONFIG SET latency-tracking-info-percentiles "50 99 99.9"
CONFIG SET maxmemory 1 hz
CONFIG SET maxmemory 10mb maxmemory 1mb
CONFIG SET timeout -1
CONFIG SET slave-read-only nope
~ CONFIG GET *-max-*-entries
~ CONFIG GET slave* replica*
~ CONFIG GET maxmemory maxmemory* bind

SET a ohmytext
SET b mynewtext
LCS a b
LCS a b LEN
LCS a b IDX
LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN
LCS a b LEN IDX
LCS a nokey
LCS nokey1 nokey2 IDX
LCS a b BOGUS
RPUSH l x
LCS a l
"#;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Exact,
    Unordered,
    Ignore,
}

/// `\xHH` inside a quoted argument stands for that byte.
fn unescape(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\'
            && text.get(i + 1) == Some(&b'x')
            && i + 3 < text.len() + 1
            && let Some(b) = std::str::from_utf8(&text[i + 2..i + 4])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 4;
            continue;
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

fn tokenize(line: &str) -> Vec<Vec<u8>> {
    let mut args = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').expect("closing quote");
            args.push(unescape(&quoted.as_bytes()[..end]));
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            args.push(rest.as_bytes()[..end].to_vec());
            rest = rest[end..].trim_start();
        }
    }
    args
}

fn normalized(reply: &[u8], mode: Mode) -> Vec<u8> {
    match mode {
        Mode::Exact => reply.to_vec(),
        Mode::Ignore => Vec::new(),
        Mode::Unordered => match split_aggregate(reply) {
            Some((header, mut elements)) => {
                elements.sort();
                let mut out = header;
                for e in elements {
                    out.extend_from_slice(&e);
                }
                out
            }
            None => reply.to_vec(),
        },
    }
}

#[test]
fn replies_match_redis_byte_for_byte() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for script in SCRIPTS.split("\n\n") {
        let mut theirs = RawClient::connect(redis.port).expect("connect redis");
        let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
        theirs.call(&["FLUSHALL"]);
        ours.call(&["FLUSHALL"]);
        for line in script.lines().filter(|l| !l.trim().is_empty()) {
            let (mode, text) = if let Some(t) = line.strip_prefix("~ ") {
                (Mode::Unordered, t)
            } else if let Some(t) = line.strip_prefix("? ") {
                (Mode::Ignore, t)
            } else if line.starts_with("HELLO 3") {
                (Mode::Ignore, line)
            } else {
                (Mode::Exact, line)
            };
            let args = tokenize(text);
            let a = normalized(&theirs.call(&args), mode);
            if std::env::var_os("DIFF_TRACE").is_some() {
                eprintln!("> {text}");
            }
            let b = normalized(&ours.call(&args), mode);
            checked += 1;
            if a != b {
                mismatches.push(format!(
                    "{text}\n   redis:  {:?}\n   sluice: {:?}",
                    String::from_utf8_lossy(&a),
                    String::from_utf8_lossy(&b)
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    eprintln!("{checked} replies identical to redis-server's");
}

/// HyperLogLogs built from the same elements are the same bytes on both servers (sparse, dense,
/// merged, with PFCOUNT's cached cardinality), and a value copied from one to the other keeps
/// counting there.
#[test]
fn hyperloglog_strings_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let mut seed = 7u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    };
    for n in [1usize, 7, 60, 400, 1500, 5000, 30000] {
        let elements: Vec<String> = (0..n).map(|_| format!("e{}", next())).collect();
        for c in [&mut theirs, &mut ours] {
            c.call(&["DEL", "h", "h2", "m"]);
            for chunk in elements.chunks(200) {
                let mut cmd = vec!["PFADD", "h"];
                cmd.extend(chunk.iter().map(String::as_str));
                c.call(&cmd);
            }
            let mut cmd = vec!["PFADD", "h2", "other"];
            cmd.extend(elements.iter().take(n / 3).map(String::as_str));
            c.call(&cmd);
        }
        for cmd in [
            &["PFCOUNT", "h"][..],
            &["GET", "h"],
            &["PFCOUNT", "h", "h2"],
            &["PFMERGE", "m", "h2", "h"],
            &["GET", "m"],
            &["PFCOUNT", "m"],
            &["GET", "m"],
        ] {
            assert_eq!(
                theirs.call(cmd),
                ours.call(cmd),
                "{cmd:?} after {n} elements"
            );
        }
        // Redis's bytes into Sluice and back.
        let body = theirs.call(&["GET", "h"]);
        let value = &body[body.iter().position(|&b| b == b'\n').unwrap() + 1..body.len() - 2];
        ours.call(&[&b"SET"[..], b"copied", value]);
        theirs.call(&[&b"SET"[..], b"copied", value]);
        for cmd in [
            &["PFADD", "copied", "one more"][..],
            &["PFCOUNT", "copied"],
            &["GET", "copied"],
        ] {
            assert_eq!(
                theirs.call(cmd),
                ours.call(cmd),
                "{cmd:?} on a copied value"
            );
        }
    }
}

#[test]
fn protocol_errors_match_redis_and_close() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let cases: &[&[u8]] = &[
        b"*1\r\n+PING\r\n",
        b"*x\r\n",
        b"*1\r\n$-5\r\n",
        b"*1\r\n$abc\r\n",
        b"*2\r\n$4\r\nECHO\r\n$999999999999\r\n",
        b"GET \"unbalanced\r\n",
    ];
    for case in cases {
        let mut theirs = RawClient::connect(redis.port).expect("connect redis");
        let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
        theirs.send_raw(case);
        ours.send_raw(case);
        let (a, b) = (theirs.read_reply(), ours.read_reply());
        assert_eq!(
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b),
            "for {:?}",
            String::from_utf8_lossy(case)
        );
        assert!(
            ours.is_closed(),
            "Sluice must close after {:?}",
            String::from_utf8_lossy(case)
        );
    }
    // Inline commands and pipelines: many commands in one write, answered in order.
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let pipeline = b"PING\r\nSET x 1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n\r\nGET x\nECHO \"a b\"\r\n";
    theirs.send_raw(pipeline);
    ours.send_raw(pipeline);
    for _ in 0..5 {
        assert_eq!(theirs.read_reply(), ours.read_reply());
    }
}

/// A small deterministic generator (no dependency needed for the random scripts).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Sends each command to both servers and collects the ones whose replies differ.
fn compare_random(
    theirs: &mut RawClient,
    ours: &mut RawClient,
    commands: &[Vec<String>],
) -> Vec<String> {
    let mut mismatches = Vec::new();
    for cmd in commands {
        let a = theirs.call(cmd);
        let b = ours.call(cmd);
        if a != b {
            mismatches.push(format!(
                "{}\n   redis:  {:?}\n   sluice: {:?}",
                cmd.join(" "),
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b)
            ));
        }
    }
    eprintln!(
        "{} random commands compared, {} differ",
        commands.len(),
        mismatches.len()
    );
    mismatches
}

/// Random stream workloads (appends, deletions, exact and approximate trims over small nodes,
/// ranges, consumer-group reads, acknowledgements, claims) give the same replies as
/// redis-server, byte for byte.
#[test]
fn random_stream_workloads_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let mut all = Vec::new();
    for seed in 1..=6u64 {
        let mut rng = Lcg(seed);
        let s = |v: &str| v.to_owned();
        let mut cmds: Vec<Vec<String>> = vec![
            vec![s("FLUSHALL")],
            vec![
                s("CONFIG"),
                s("SET"),
                s("stream-node-max-entries"),
                (2 + rng.below(6)).to_string(),
            ],
        ];
        let mut ms = 1u64;
        let id = |rng: &mut Lcg, ms: u64| format!("{}-{}", 1 + rng.below(ms + 1), rng.below(4));
        for step in 0..400 {
            let cmd: Vec<String> = match rng.below(20) {
                0..=6 => {
                    ms += rng.below(3);
                    let idarg = if rng.below(4) == 0 {
                        format!("{ms}-*")
                    } else {
                        format!("{ms}-{}", rng.below(3))
                    };
                    let mut c = vec![s("XADD"), s("st")];
                    if rng.below(8) == 0 {
                        c.extend([s("MAXLEN"), s("~"), (rng.below(30)).to_string()]);
                    }
                    c.push(idarg);
                    for f in 0..=rng.below(2) {
                        c.push(format!("f{}", if rng.below(3) == 0 { f + 1 } else { f }));
                        c.push(format!("v{step}"));
                    }
                    c
                }
                7 | 8 => vec![s("XDEL"), s("st"), id(&mut rng, ms), id(&mut rng, ms)],
                9 => {
                    let mut c = vec![s("XTRIM"), s("st")];
                    if rng.below(2) == 0 {
                        c.push(s("MAXLEN"));
                        if rng.below(2) == 0 {
                            c.push(s("~"));
                        }
                        c.push(rng.below(40).to_string());
                    } else {
                        c.push(s("MINID"));
                        c.push(id(&mut rng, ms));
                    }
                    c
                }
                10 | 11 => {
                    let (a, b) = (id(&mut rng, ms), id(&mut rng, ms));
                    let name = if rng.below(2) == 0 {
                        "XRANGE"
                    } else {
                        "XREVRANGE"
                    };
                    let mut c = vec![s(name), s("st"), a, b];
                    if rng.below(2) == 0 {
                        c.extend([s("COUNT"), rng.below(6).to_string()]);
                    }
                    c
                }
                12 => vec![s("XLEN"), s("st")],
                13 => vec![
                    s("XGROUP"),
                    s("CREATE"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    s("0"),
                    s("MKSTREAM"),
                ],
                14 | 15 => {
                    let mut c = vec![
                        s("XREADGROUP"),
                        s("GROUP"),
                        format!("g{}", rng.below(2)),
                        format!("c{}", rng.below(3)),
                        s("COUNT"),
                        (1 + rng.below(4)).to_string(),
                    ];
                    if rng.below(4) == 0 {
                        c.push(s("NOACK"));
                    }
                    c.extend([s("STREAMS"), s("st")]);
                    c.push(if rng.below(3) == 0 { s("0") } else { s(">") });
                    c
                }
                16 => vec![
                    s("XACK"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    id(&mut rng, ms),
                ],
                17 => vec![s("XPENDING"), s("st"), format!("g{}", rng.below(2))],
                18 => vec![
                    s("XAUTOCLAIM"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    format!("c{}", rng.below(3)),
                    s("0"),
                    s("0"),
                    s("COUNT"),
                    (1 + rng.below(3)).to_string(),
                    s("JUSTID"),
                ],
                _ => vec![s("XINFO"), s("GROUPS"), s("st")],
            };
            cmds.push(cmd);
        }
        cmds.push(vec![s("XRANGE"), s("st"), s("-"), s("+")]);
        all.extend(compare_random(&mut theirs, &mut ours, &cmds));
    }
    assert!(
        all.is_empty(),
        "{} replies differ from redis-server:\n{}",
        all.len(),
        all.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Random bitmap workloads (SETBIT, BITCOUNT and BITPOS over BYTE and BIT ranges, BITFIELD with
/// every overflow mode, BITOP) give the same replies as redis-server.
#[test]
fn random_bitmap_workloads_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let mut rng = Lcg(42);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    let signed = |rng: &mut Lcg| rng.below(200) as i64 - 100;
    for _ in 0..1500 {
        let key = format!("b{}", rng.below(3));
        let cmd = match rng.below(7) {
            0 | 1 => vec![
                s("SETBIT"),
                key,
                rng.below(300).to_string(),
                rng.below(2).to_string(),
            ],
            2 => {
                let mut c = vec![s("BITCOUNT"), key];
                if rng.below(3) != 0 {
                    c.push(signed(&mut rng).to_string());
                    c.push(signed(&mut rng).to_string());
                    if rng.below(2) == 0 {
                        c.push(if rng.below(2) == 0 {
                            s("BIT")
                        } else {
                            s("BYTE")
                        });
                    }
                }
                c
            }
            3 => {
                let mut c = vec![s("BITPOS"), key, rng.below(2).to_string()];
                for _ in 0..rng.below(3) {
                    c.push(signed(&mut rng).to_string());
                }
                if c.len() == 5 && rng.below(2) == 0 {
                    c.push(if rng.below(2) == 0 {
                        s("BIT")
                    } else {
                        s("BYTE")
                    });
                }
                c
            }
            4 | 5 => {
                let mut c = vec![s("BITFIELD"), key];
                for _ in 0..=rng.below(3) {
                    let sign = if rng.below(2) == 0 { "i" } else { "u" };
                    let bits = 1 + rng.below(if sign == "i" { 64 } else { 63 });
                    let ty = format!("{sign}{bits}");
                    let offset = if rng.below(4) == 0 {
                        format!("#{}", rng.below(5))
                    } else {
                        rng.below(200).to_string()
                    };
                    match rng.below(4) {
                        0 => c.extend([s("GET"), ty, offset]),
                        1 => c.extend([
                            s("SET"),
                            ty,
                            offset,
                            (rng.next() as i64 - (1 << 30)).to_string(),
                        ]),
                        2 => c.extend([s("INCRBY"), ty, offset, signed(&mut rng).to_string()]),
                        _ => c.extend([
                            s("OVERFLOW"),
                            s(["WRAP", "SAT", "FAIL"][rng.below(3) as usize]),
                        ]),
                    }
                }
                c
            }
            _ => {
                let op = ["AND", "OR", "XOR", "NOT"][rng.below(4) as usize];
                let mut c = vec![s("BITOP"), s(op), s("dest"), key];
                if op != "NOT" {
                    c.push(format!("b{}", rng.below(3)));
                }
                c
            }
        };
        cmds.push(cmd);
        if rng.below(25) == 0 {
            cmds.push(vec![s("GET"), format!("b{}", rng.below(3))]);
            cmds.push(vec![s("GET"), s("dest")]);
        }
    }
    let mismatches = compare_random(&mut theirs, &mut ours, &cmds);
    assert!(
        mismatches.is_empty(),
        "{} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Random geo searches (radius and box, from points and members, sorted, unsorted, with ANY and
/// COUNT, stored) and sorted-set algebra over random data give the same replies as
/// redis-server, order included.
#[test]
fn random_geo_and_zset_workloads_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let mut rng = Lcg(7);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    let coord = |rng: &mut Lcg, span: f64, base: f64| {
        format!(
            "{:.6}",
            base + (rng.below(1_000_000) as f64 / 1_000_000.0 - 0.5) * span
        )
    };
    for i in 0..300 {
        let mut c = vec![s("GEOADD"), s("pts")];
        c.push(coord(&mut rng, 8.0, 13.0));
        c.push(coord(&mut rng, 6.0, 45.0));
        c.push(format!("m{i}"));
        cmds.push(c);
    }
    let units = ["m", "km", "mi", "ft"];
    for _ in 0..300 {
        let unit = s(units[rng.below(4) as usize]);
        let mut c = vec![s("GEOSEARCH"), s("pts")];
        if rng.below(2) == 0 {
            c.extend([s("FROMMEMBER"), format!("m{}", rng.below(300))]);
        } else {
            c.extend([
                s("FROMLONLAT"),
                coord(&mut rng, 8.0, 13.0),
                coord(&mut rng, 6.0, 45.0),
            ]);
        }
        let size = |rng: &mut Lcg| (1 + rng.below(400)).to_string();
        if rng.below(2) == 0 {
            c.extend([s("BYRADIUS"), size(&mut rng), unit]);
        } else {
            c.extend([s("BYBOX"), size(&mut rng), size(&mut rng), unit]);
        }
        match rng.below(4) {
            0 => c.push(s("ASC")),
            1 => c.push(s("DESC")),
            _ => {}
        }
        if rng.below(3) == 0 {
            c.extend([s("COUNT"), (1 + rng.below(10)).to_string()]);
            if rng.below(2) == 0 {
                c.push(s("ANY"));
            }
        }
        for opt in ["WITHDIST", "WITHCOORD", "WITHHASH"] {
            if rng.below(3) == 0 {
                c.push(s(opt));
            }
        }
        cmds.push(c);
        if rng.below(10) == 0 {
            cmds.push(vec![
                s("GEORADIUSBYMEMBER"),
                s("pts"),
                format!("m{}", rng.below(300)),
                (1 + rng.below(300)).to_string(),
                s("km"),
                s("STOREDIST"),
                s("near"),
            ]);
            cmds.push(vec![
                s("ZRANGE"),
                s("near"),
                s("0"),
                s("-1"),
                s("WITHSCORES"),
            ]);
        }
    }
    for k in 0..3 {
        for _ in 0..40 {
            cmds.push(vec![
                s("ZADD"),
                format!("z{k}"),
                (rng.below(20) as i64 - 10).to_string(),
                format!("e{}", rng.below(60)),
            ]);
        }
    }
    for _ in 0..100 {
        let op = ["ZUNION", "ZINTER", "ZDIFF"][rng.below(3) as usize];
        let n = 1 + rng.below(3);
        let mut c = vec![s(op), n.to_string()];
        for _ in 0..n {
            c.push(format!("z{}", rng.below(3)));
        }
        if op != "ZDIFF" && rng.below(2) == 0 {
            c.push(s("WEIGHTS"));
            for _ in 0..n {
                c.push((rng.below(7) as i64 - 3).to_string());
            }
        }
        if op != "ZDIFF" && rng.below(2) == 0 {
            c.extend([
                s("AGGREGATE"),
                s(["SUM", "MIN", "MAX"][rng.below(3) as usize]),
            ]);
        }
        c.push(s("WITHSCORES"));
        cmds.push(c);
    }
    let mismatches = compare_random(&mut theirs, &mut ours, &cmds);
    assert!(
        mismatches.is_empty(),
        "{} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Random SORT (BY, GET with hash fields, LIMIT, ALPHA, DESC, STORE), LCS and multi-key pops give
/// the same replies as redis-server.
#[test]
fn random_sort_lcs_and_pop_workloads_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut theirs = RawClient::connect(redis.port).expect("connect redis");
    let mut ours = RawClient::connect(sluice.port).expect("connect sluice");
    let mut rng = Lcg(99);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    for i in 0..40 {
        cmds.push(vec![
            s("RPUSH"),
            s("l"),
            (rng.below(30) as i64 - 10).to_string(),
        ]);
        cmds.push(vec![
            s("SET"),
            format!("w_{i}"),
            (rng.below(50)).to_string(),
        ]);
        cmds.push(vec![
            s("HSET"),
            format!("h_{}", rng.below(30)),
            s("f"),
            rng.below(9).to_string(),
        ]);
        cmds.push(vec![
            s("ZADD"),
            s("z"),
            rng.below(10).to_string(),
            format!("{}", rng.below(40)),
        ]);
    }
    for _ in 0..300 {
        let cmd = match rng.below(5) {
            0 | 1 => {
                let mut c = vec![s(if rng.below(4) == 0 { "SORT_RO" } else { "SORT" })];
                c.push(s(["l", "z", "nokey"][rng.below(3) as usize]));
                if rng.below(2) == 0 {
                    c.extend([
                        s("BY"),
                        s(["w_*", "h_*->f", "nosort", "w_*->x"][rng.below(4) as usize]),
                    ]);
                }
                if rng.below(3) == 0 {
                    c.extend([
                        s("LIMIT"),
                        (rng.below(8) as i64 - 2).to_string(),
                        (rng.below(8) as i64 - 2).to_string(),
                    ]);
                }
                for _ in 0..rng.below(3) {
                    c.extend([
                        s("GET"),
                        s(["#", "w_*", "h_*->f", "nope_*"][rng.below(4) as usize]),
                    ]);
                }
                if rng.below(2) == 0 {
                    c.push(s("DESC"));
                }
                if rng.below(2) == 0 {
                    c.push(s("ALPHA"));
                }
                if c[0] == "SORT" && rng.below(4) == 0 {
                    c.extend([s("STORE"), s("dst")]);
                }
                c
            }
            2 => {
                let word = |rng: &mut Lcg| {
                    (0..rng.below(12))
                        .map(|_| (b'a' + rng.below(4) as u8) as char)
                        .collect::<String>()
                };
                let (a, b) = (word(&mut rng), word(&mut rng));
                cmds.push(vec![s("MSET"), s("la"), a, s("lb"), b]);
                let mut c = vec![s("LCS"), s("la"), s("lb")];
                match rng.below(4) {
                    0 => c.push(s("LEN")),
                    1 => c.push(s("IDX")),
                    2 => c.extend([
                        s("IDX"),
                        s("MINMATCHLEN"),
                        rng.below(3).to_string(),
                        s("WITHMATCHLEN"),
                    ]),
                    _ => {}
                }
                c
            }
            3 => vec![
                s("LMPOP"),
                s("2"),
                s("nokey"),
                s("l"),
                s(if rng.below(2) == 0 { "LEFT" } else { "RIGHT" }),
                s("COUNT"),
                (1 + rng.below(3)).to_string(),
            ],
            _ => vec![
                s("ZMPOP"),
                s("1"),
                s("z"),
                s(if rng.below(2) == 0 { "MIN" } else { "MAX" }),
                s("COUNT"),
                (1 + rng.below(3)).to_string(),
            ],
        };
        cmds.push(cmd);
        if rng.below(10) == 0 {
            cmds.push(vec![s("LRANGE"), s("dst"), s("0"), s("-1")]);
            cmds.push(vec![s("RPUSH"), s("l"), rng.below(20).to_string(), s("x")]);
            cmds.push(vec![
                s("ZADD"),
                s("z"),
                rng.below(10).to_string(),
                rng.below(40).to_string(),
            ]);
        }
    }
    let mismatches = compare_random(&mut theirs, &mut ours, &cmds);
    assert!(
        mismatches.is_empty(),
        "{} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

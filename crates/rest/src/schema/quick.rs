//! A first, plain loader of the schema cache (tables, columns, keys, foreign keys, many-to-many
//! junctions, functions), used until the full loader lands. TEMPORARY.

use super::model::*;
use super::through_views::{Catalog, ForeignKeyRow};
use super::views::{ViewRule, column_origins, trace};
use sluice_pg::Connection;
use std::collections::HashMap;

/// The schemas whose relations views may show: every one but the system's.
const USER_SCHEMAS: &str = "n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'";

/// Loads what `schemas` hold, with the default extra search path (`public`) and hoisted
/// settings.
pub async fn load(
    conn: &mut Connection,
    schemas: &[String],
) -> Result<SchemaCache, sluice_pg::Error> {
    let defaults = crate::RestConfig::default();
    load_searching(
        conn,
        schemas,
        &defaults.extra_search_path,
        &defaults.hoisted_tx_settings,
    )
    .await
}

/// Loads what `schemas` hold; computed fields are also looked for in `extra_search_path`
/// (PostgREST's `db-extra-search-path`); functions' `SET` clauses naming one of `hoisted` are
/// kept to be set for a call's transaction (`db-hoisted-tx-settings`).
pub async fn load_searching(
    conn: &mut Connection,
    schemas: &[String],
    extra_search_path: &[String],
    hoisted: &[String],
) -> Result<SchemaCache, sluice_pg::Error> {
    let list = array_literal(schemas);
    let mut cache = SchemaCache {
        schemas: schemas.to_vec(),
        ..SchemaCache::default()
    };
    let rows = conn
        .query(
            "SELECT n.nspname::text, c.relname::text, c.relkind::text, \
                    pg_catalog.obj_description(c.oid, 'pg_class'), \
                    pg_catalog.pg_relation_is_updatable(c.oid, true), c.oid \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r','v','m','f','p')",
            &[&list],
        )
        .await?;
    let mut by_oid: HashMap<u32, QualifiedName> = HashMap::new();
    for row in rows.iter() {
        let name = QualifiedName::new(row.get::<&str>(0)?, row.get::<&str>(1)?);
        let kind = match row.get::<&str>(2)? {
            "r" => RelationKind::Table,
            "p" => RelationKind::PartitionedTable,
            "v" => RelationKind::View,
            "m" => RelationKind::MaterializedView,
            _ => RelationKind::ForeignTable,
        };
        let updatable: i32 = row.get(4)?;
        let oid: u32 = row.get(5)?;
        by_oid.insert(oid, name.clone());
        cache.tables.insert(
            name.clone(),
            Table {
                name,
                kind,
                description: row.get::<Option<String>>(3)?,
                columns: Vec::new(),
                primary_key: Vec::new(),
                insertable: updatable & 8 != 0,
                updatable: updatable & 4 != 0,
                deletable: updatable & 16 != 0,
                computed: Vec::new(),
            },
        );
    }
    let rows = conn
        .query(
            "SELECT a.attrelid, a.attname::text, a.atttypid, \
                    pg_catalog.format_type(a.atttypid, a.atttypmod), \
                    pg_catalog.format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), a.atttypmod), \
                    NOT a.attnotnull, \
                    CASE WHEN a.attidentity = 'd' THEN pg_catalog.format('nextval(%L)', \
                           pg_catalog.pg_get_serial_sequence(c.oid::regclass::text, a.attname)) \
                         WHEN a.attgenerated <> '' THEN NULL \
                         WHEN t.typbasetype <> 0 AND d.adbin IS NULL \
                           THEN pg_catalog.pg_get_expr(t.typdefaultbin, 0) \
                         ELSE pg_catalog.pg_get_expr(d.adbin, d.adrelid) END, \
                    a.attgenerated <> '' OR a.attidentity = 'a', \
                    CASE WHEN a.atttypmod > 4 AND t.typname IN ('varchar', 'bpchar') THEN a.atttypmod - 4 END, \
                    coalesce((SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) \
                              FROM pg_catalog.pg_enum e WHERE e.enumtypid = a.atttypid), '{}'), \
                    pg_catalog.col_description(a.attrelid, a.attnum) \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r','v','m','f','p') \
               AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attrelid, a.attnum",
            &[&list],
        )
        .await?;
    for row in rows.iter() {
        let oid: u32 = row.get(0)?;
        let Some(table) = by_oid.get(&oid).and_then(|n| cache.tables.get_mut(n)) else {
            continue;
        };
        table.columns.push(Column {
            name: row.get::<&str>(1)?.to_string(),
            type_oid: row.get(2)?,
            type_name: row.get::<&str>(3)?.to_string(),
            base_type_name: row.get::<&str>(4)?.to_string(),
            nullable: row.get(5)?,
            default: row.get::<Option<String>>(6)?,
            generated: row.get(7)?,
            max_length: row.get::<Option<i32>>(8)?,
            enum_values: row.get(9)?,
            description: row.get::<Option<String>>(10)?,
        });
    }
    // Keys: primary (p), unique (u) for one-to-one detection, foreign (f); of every schema when
    // an exposed view may show a table of one that is not, else of the exposed ones (a
    // relationship needs both ends exposed, and a junction too). In the order they were made,
    // which is the order relationships are listed in (PGRST201's details).
    let exposed_views = cache
        .tables
        .values()
        .any(|t| matches!(t.kind, RelationKind::View | RelationKind::MaterializedView));
    let scope = if exposed_views {
        USER_SCHEMAS
    } else {
        "n.nspname = ANY($1::text[])"
    };
    let scope_params: &[&dyn sluice_pg::ToSql] = if exposed_views { &[] } else { &[&list] };
    let rows = conn
        .query(
            &format!(
                "SELECT c.conrelid, c.contype::text, c.conname::text, c.confrelid, \
                    (SELECT array_agg(a.attname::text ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i) \
                       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n), \
                    coalesce((SELECT array_agg(a.attname::text ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i) \
                       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n), '{{}}'), \
                    c.conkey, coalesce(c.confkey, '{{}}') \
             FROM pg_catalog.pg_constraint c \
             JOIN pg_catalog.pg_class r ON r.oid = c.conrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace \
             WHERE {scope} AND c.contype IN ('p', 'u', 'f') \
             ORDER BY c.oid"
            ),
            scope_params,
        )
        .await?;
    let mut primary_keys: HashMap<u32, Vec<i16>> = HashMap::new();
    let mut uniques: HashMap<u32, Vec<Vec<String>>> = HashMap::new();
    let mut fks: Vec<ForeignKeyRow> = Vec::new();
    for row in rows.iter() {
        let oid: u32 = row.get(0)?;
        let kind: &str = row.get(1)?;
        let columns: Vec<String> = row.get(4)?;
        match kind {
            "p" => {
                if let Some(table) = by_oid.get(&oid).and_then(|n| cache.tables.get_mut(n)) {
                    table.primary_key = columns.clone();
                }
                primary_keys.insert(oid, row.get(6)?);
                uniques.entry(oid).or_default().push(columns);
            }
            "u" => uniques.entry(oid).or_default().push(columns),
            _ => fks.push(ForeignKeyRow {
                table: oid,
                constraint: row.get::<&str>(2)?.to_string(),
                foreign: row.get(3)?,
                columns,
                foreign_columns: row.get(5)?,
                attnums: row.get(6)?,
                foreign_attnums: row.get(7)?,
            }),
        }
    }
    let unique = |oid: u32, cols: &[String]| {
        uniques.get(&oid).is_some_and(|keys| {
            keys.iter().any(|k| {
                let mut a = k.clone();
                let mut b = cols.to_vec();
                a.sort();
                b.sort();
                a == b
            })
        })
    };
    for ForeignKeyRow {
        table: table_oid,
        constraint,
        foreign: foreign_oid,
        columns,
        foreign_columns,
        ..
    } in &fks
    {
        let (Some(table), Some(foreign)) = (by_oid.get(table_oid), by_oid.get(foreign_oid)) else {
            continue;
        };
        let pairs: Vec<(String, String)> = columns
            .iter()
            .cloned()
            .zip(foreign_columns.iter().cloned())
            .collect();
        let is_self = table == foreign;
        let one_to_one = unique(*table_oid, columns);
        let (forward, backward) = Cardinality::of_foreign_key(constraint, pairs, one_to_one);
        cache
            .relationships
            .entry(table.clone())
            .or_default()
            .push(Relationship {
                table: table.clone(),
                foreign_table: foreign.clone(),
                cardinality: forward,
                is_self,
            });
        cache
            .relationships
            .entry(foreign.clone())
            .or_default()
            .push(Relationship {
                table: foreign.clone(),
                foreign_table: table.clone(),
                cardinality: backward,
                is_self,
            });
    }
    // Many-to-many: a junction with foreign keys to two tables, whose key columns are part of
    // its primary key (PostgREST's rule, simplified).
    for ForeignKeyRow {
        table: junction_oid,
        ..
    } in &fks
    {
        let keys: Vec<&ForeignKeyRow> = fks.iter().filter(|f| f.table == *junction_oid).collect();
        let Some(junction) = by_oid.get(junction_oid) else {
            continue;
        };
        let pk: Vec<String> = cache
            .tables
            .get(junction)
            .map(|t| t.primary_key.clone())
            .unwrap_or_default();
        for a in &keys {
            for b in &keys {
                if a.constraint == b.constraint
                    || !a.columns.iter().chain(&b.columns).all(|c| pk.contains(c))
                {
                    continue;
                }
                let (Some(source), Some(target)) = (by_oid.get(&a.foreign), by_oid.get(&b.foreign))
                else {
                    continue;
                };
                let exists = cache.relationships.get(source).is_some_and(|rels| {
                    rels.iter().any(|r| {
                        matches!(&r.cardinality, Cardinality::ManyToMany(j)
                        if j.source.constraint == a.constraint && j.target.constraint == b.constraint)
                    })
                });
                if exists {
                    continue;
                }
                let junction_info = Junction {
                    table: junction.clone(),
                    source: ForeignKey {
                        constraint: a.constraint.clone(),
                        columns: a
                            .foreign_columns
                            .iter()
                            .cloned()
                            .zip(a.columns.iter().cloned())
                            .collect(),
                    },
                    target: ForeignKey {
                        constraint: b.constraint.clone(),
                        columns: b
                            .foreign_columns
                            .iter()
                            .cloned()
                            .zip(b.columns.iter().cloned())
                            .collect(),
                    },
                };
                cache
                    .relationships
                    .entry(source.clone())
                    .or_default()
                    .push(Relationship {
                        table: source.clone(),
                        foreign_table: target.clone(),
                        cardinality: Cardinality::ManyToMany(junction_info),
                        is_self: source == target,
                    });
            }
        }
    }
    // Views: where their columns come from, and the relationships and keys that gives them
    // (none to trace when no view is exposed).
    let rows = conn
        .query(
            &format!(
                "SELECT v.oid, r.ev_action::text, \
                    array_agg(a.attnum ORDER BY a.attnum), \
                    array_agg(a.attname::text ORDER BY a.attnum) \
             FROM pg_catalog.pg_class v \
             JOIN pg_catalog.pg_namespace n ON n.oid = v.relnamespace \
             JOIN pg_catalog.pg_rewrite r ON r.ev_class = v.oid AND r.rulename = '_RETURN' \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = v.oid AND a.attnum > 0 \
               AND NOT a.attisdropped \
             WHERE $1::bool AND v.relkind IN ('v', 'm') AND {USER_SCHEMAS} \
             GROUP BY v.oid, r.ev_action::text"
            ),
            &[&exposed_views],
        )
        .await?;
    let mut rules: HashMap<u32, ViewRule> = HashMap::new();
    for row in rows.iter() {
        let attnums: Vec<i16> = row.get(2)?;
        let names: Vec<String> = row.get(3)?;
        rules.insert(
            row.get(0)?,
            ViewRule {
                columns: attnums.into_iter().zip(names).collect(),
                origins: column_origins(row.get(1)?),
            },
        );
    }
    let traced = trace(&rules);
    let (view_keys, view_relationships) = {
        let catalog = Catalog::new(&by_oid, &fks, &primary_keys, &unique, &traced);
        (catalog.view_primary_keys(), catalog.relationships())
    };
    for (view, key) in view_keys {
        if let Some(table) = cache.tables.get_mut(&view) {
            table.primary_key = key;
        }
    }
    for relationship in view_relationships {
        cache
            .relationships
            .entry(relationship.table.clone())
            .or_default()
            .push(relationship);
    }
    // Functions.
    let rows = conn
        .query(
            "SELECT n.nspname::text, p.proname::text, pg_catalog.obj_description(p.oid, 'pg_proc'), \
                    coalesce(p.proargnames, '{}')::text[], coalesce(p.proargmodes::text[], '{}'), \
                    coalesce(p.proallargtypes, p.proargtypes::oid[])::oid[], \
                    p.pronargdefaults, p.provariadic <> 0, p.prorettype, \
                    pg_catalog.format_type(p.prorettype, NULL), p.proretset, p.provolatile::text, \
                    p.prokind::text, t.typtype::text, t.typrelid, \
                    coalesce((SELECT array_agg(pg_catalog.format_type(x, NULL)) \
                              FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) x), '{}'), \
                    coalesce(f.names, '{}'), coalesce(f.types, '{}'), coalesce(f.type_names, '{}'), \
                    coalesce(p.proconfig, '{}') \
             FROM pg_catalog.pg_proc p \
             JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
             JOIN pg_catalog.pg_type t ON t.oid = p.prorettype \
             LEFT JOIN LATERAL ( \
               SELECT array_agg(a.attname::text ORDER BY a.attnum) AS names, \
                      array_agg(a.atttypid ORDER BY a.attnum)::oid[] AS types, \
                      array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) \
                                ORDER BY a.attnum) AS type_names \
               FROM pg_catalog.pg_attribute a \
               WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) f ON TRUE \
             WHERE n.nspname = ANY($1::text[]) AND p.prokind IN ('f', 'p')",
            &[&list],
        )
        .await?;
    for row in rows.iter() {
        let names: Vec<String> = row.get(3)?;
        let modes: Vec<String> = row.get(4)?;
        let types: Vec<u32> = row.get(5)?;
        let type_names: Vec<String> = row.get(15)?;
        let defaults: i16 = row.get(6)?;
        let variadic: bool = row.get(7)?;
        let mut params = Vec::new();
        // The OUT, INOUT and TABLE columns, named as `SELECT * FROM f()` names them.
        let mut out_columns = Vec::new();
        for (i, type_oid) in types.iter().enumerate() {
            let mode = modes.get(i).map(String::as_str).unwrap_or("i");
            if matches!(mode, "o" | "b" | "t") {
                let name = match names.get(i) {
                    Some(name) if !name.is_empty() => name.clone(),
                    _ => format!("column{}", out_columns.len() + 1),
                };
                let type_name = type_names.get(i).cloned().unwrap_or_default();
                out_columns.push(result_column(name, *type_oid, type_name));
            }
            if mode == "o" || mode == "t" {
                continue;
            }
            params.push(RoutineParam {
                name: names.get(i).cloned().unwrap_or_default(),
                type_oid: *type_oid,
                type_name: type_names.get(i).cloned().unwrap_or_default(),
                has_default: false,
                variadic: mode == "v",
            });
        }
        let inputs = params.len();
        for (i, p) in params.iter_mut().enumerate() {
            p.has_default = i + (defaults as usize) >= inputs;
        }
        let _ = variadic;
        let ret_oid: u32 = row.get(8)?;
        let ret_name = row.get::<&str>(9)?.to_string();
        let setof: bool = row.get(10)?;
        let typtype: &str = row.get(13)?;
        let typrelid: u32 = row.get(14)?;
        let returns_table = by_oid.get(&typrelid).cloned();
        // A single OUT (or TABLE) column makes the return type that column's, yet the result
        // is still a row with it (PostgREST answers {"num_plus_one": 6}).
        let composite =
            typtype == "c" || !out_columns.is_empty() || (setof && ret_name == "record");
        let name = QualifiedName::new(row.get::<&str>(0)?, row.get::<&str>(1)?);
        let columns = if returns_table.is_some() {
            None
        } else if !out_columns.is_empty() {
            Some(out_columns)
        } else if typtype == "c" {
            let field_names: Vec<String> = row.get(16)?;
            let field_types: Vec<u32> = row.get(17)?;
            let field_type_names: Vec<String> = row.get(18)?;
            Some(
                field_names
                    .into_iter()
                    .zip(field_types)
                    .zip(field_type_names)
                    .map(|((name, oid), type_name)| result_column(name, oid, type_name))
                    .collect(),
            )
        } else if composite {
            // SETOF record without OUT parameters: its columns are known only to the call.
            Some(Vec::new())
        } else {
            Some(vec![result_column(
                name.name.clone(),
                ret_oid,
                ret_name.clone(),
            )])
        };
        let result = columns.map(|columns| Table {
            name: name.clone(),
            kind: RelationKind::FunctionResult,
            description: None,
            columns,
            primary_key: Vec::new(),
            insertable: false,
            updatable: false,
            deletable: false,
            computed: Vec::new(),
        });
        cache
            .routines
            .entry(name.clone())
            .or_default()
            .push(Routine {
                name,
                description: row.get::<Option<String>>(2)?,
                params,
                returns: if setof {
                    ReturnType::SetOf {
                        type_oid: ret_oid,
                        type_name: ret_name,
                    }
                } else {
                    ReturnType::Single {
                        type_oid: ret_oid,
                        type_name: ret_name,
                    }
                },
                returns_table,
                result,
                returns_composite: composite,
                volatility: match row.get::<&str>(11)? {
                    "i" => Volatility::Immutable,
                    "s" => Volatility::Stable,
                    _ => Volatility::Volatile,
                },
                is_procedure: row.get::<&str>(12)? == "p",
                hoisted_settings: super::settings::hoisted(row.get(19)?, hoisted),
                isolation: super::settings::isolation(row.get(19)?),
            });
    }
    let extra = array_literal(extra_search_path);
    super::computed::load(conn, &list, &extra, &by_oid, &mut cache).await?;
    super::computed::load_relationships(conn, &list, &by_oid, &mut cache).await?;
    let path = conn
        .query("SELECT pg_catalog.current_schemas(false)::text[]", &[])
        .await?;
    if let Some(row) = path.iter().next() {
        cache.connection_search_path = row.get(0)?;
    }
    cache.roles = super::settings::load_role_settings(conn).await?;
    cache.media = super::media::load(conn, &list).await?;
    Ok(cache)
}

/// `names` as a text array literal, each quoted.
fn array_literal(names: &[String]) -> String {
    format!(
        "{{{}}}",
        names
            .iter()
            .map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// A column of a function's result: nullable, without default, writable by nobody.
pub(super) fn result_column(name: String, type_oid: u32, type_name: String) -> Column {
    Column {
        name,
        type_oid,
        base_type_name: type_name.clone(),
        type_name,
        nullable: true,
        default: None,
        generated: false,
        max_length: None,
        enum_values: Vec::new(),
        description: None,
    }
}

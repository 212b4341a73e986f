//! Relationships that pass through views, as PostgREST finds them: a view showing a foreign
//! key's columns (under any names) stands for its table at either end of the key, and a view
//! showing a junction table's primary key is a junction of many-to-many relationships. The
//! relationships between tables alone are the loader's; these are the ones a view takes part in.

use super::model::*;
use super::views::ColumnRef;
use std::collections::HashMap;

/// A foreign key as the catalog holds it (any schema: a view may show a table that is not
/// exposed).
#[derive(Debug, Clone)]
pub struct ForeignKeyRow {
    /// The referencing table's oid.
    pub table: u32,
    /// The constraint's name.
    pub constraint: String,
    /// The referenced table's oid.
    pub foreign: u32,
    /// The referencing columns' names, in key order.
    pub columns: Vec<String>,
    /// The referenced columns' names, in key order.
    pub foreign_columns: Vec<String>,
    /// The referencing columns' numbers.
    pub attnums: Vec<i16>,
    /// The referenced columns' numbers.
    pub foreign_attnums: Vec<i16>,
}

/// What the derivation reads.
pub struct Catalog<'a> {
    /// The exposed relations by oid.
    exposed: &'a HashMap<u32, QualifiedName>,
    /// Every foreign key.
    foreign_keys: &'a [ForeignKeyRow],
    /// Every table's primary key (column numbers in key order).
    primary_keys: &'a HashMap<u32, Vec<i16>>,
    /// Whether a table's columns (by name) are unique together (a one-to-one key).
    unique: &'a dyn Fn(u32, &[String]) -> bool,
    /// The exposed views with the columns that show a base column, in their names' order (for
    /// a stable order of relationships).
    views: Vec<(&'a QualifiedName, &'a [(String, ColumnRef)])>,
}

/// One end of a relationship: a relation and its columns in key order.
struct End<'a> {
    name: &'a QualifiedName,
    columns: Vec<String>,
    view: bool,
}

/// The most ways one view may show a key (when it shows a key column under several names,
/// each choice of names is a relationship of its own).
const MAX_CHOICES: usize = 16;

impl<'a> Catalog<'a> {
    /// The catalog of the exposed relations `exposed`, with every foreign key and primary key,
    /// `unique` telling one-to-one keys, and views' columns as [`super::views::trace`] found.
    pub fn new(
        exposed: &'a HashMap<u32, QualifiedName>,
        foreign_keys: &'a [ForeignKeyRow],
        primary_keys: &'a HashMap<u32, Vec<i16>>,
        unique: &'a dyn Fn(u32, &[String]) -> bool,
        traced: &'a HashMap<u32, Vec<(String, ColumnRef)>>,
    ) -> Catalog<'a> {
        let mut views: Vec<_> = traced
            .iter()
            .filter_map(|(oid, columns)| Some((exposed.get(oid)?, columns.as_slice())))
            .collect();
        views.sort_by(|a, b| a.0.cmp(b.0));
        Catalog {
            exposed,
            foreign_keys,
            primary_keys,
            unique,
            views,
        }
    }

    /// The relations standing for `table`'s `attnums` (named `names` in the table): the table
    /// when exposed, and each exposed view showing them all.
    fn ends(&self, table: u32, attnums: &[i16], names: &[String]) -> Vec<End<'_>> {
        let mut ends = Vec::new();
        if let Some(name) = self.exposed.get(&table) {
            ends.push(End {
                name,
                columns: names.to_vec(),
                view: false,
            });
        }
        for &(name, columns) in &self.views {
            let choices: Vec<Vec<&String>> = attnums
                .iter()
                .map(|attnum| {
                    columns
                        .iter()
                        .filter(|(_, origin)| *origin == (table, *attnum))
                        .map(|(column, _)| column)
                        .collect()
                })
                .collect();
            if choices.is_empty() || choices.iter().any(Vec::is_empty) {
                continue;
            }
            let mut combinations: Vec<Vec<String>> = vec![Vec::new()];
            for options in &choices {
                combinations = combinations
                    .iter()
                    .flat_map(|prefix| {
                        options.iter().map(move |option| {
                            let mut next = prefix.clone();
                            next.push((*option).clone());
                            next
                        })
                    })
                    .take(MAX_CHOICES)
                    .collect();
            }
            ends.extend(combinations.into_iter().map(|columns| End {
                name,
                columns,
                view: true,
            }));
        }
        ends
    }

    /// The many-to-one (or one-to-one) relationships through views, each with its reverse.
    fn key_relationships(&self, out: &mut Vec<Relationship>) {
        for fk in self.foreign_keys {
            let sources = self.ends(fk.table, &fk.attnums, &fk.columns);
            let targets = self.ends(fk.foreign, &fk.foreign_attnums, &fk.foreign_columns);
            let one_to_one = (self.unique)(fk.table, &fk.columns);
            for source in &sources {
                for target in targets.iter().filter(|t| source.view || t.view) {
                    let pairs: Vec<(String, String)> = source
                        .columns
                        .iter()
                        .cloned()
                        .zip(target.columns.iter().cloned())
                        .collect();
                    let (forward, backward) =
                        Cardinality::of_foreign_key(&fk.constraint, pairs, one_to_one);
                    let is_self = source.name == target.name;
                    out.push(Relationship {
                        table: source.name.clone(),
                        foreign_table: target.name.clone(),
                        cardinality: forward,
                        is_self,
                    });
                    out.push(Relationship {
                        table: target.name.clone(),
                        foreign_table: source.name.clone(),
                        cardinality: backward,
                        is_self,
                    });
                }
            }
        }
    }

    /// The junctions of `table` (its primary key `pk`): the table when exposed, and each
    /// exposed view showing its whole key; with the junction's name for each key column.
    fn junctions(
        &self,
        table: u32,
        pk: &[i16],
    ) -> Vec<(&QualifiedName, HashMap<i16, String>, bool)> {
        let mut junctions = Vec::new();
        if let Some(name) = self.exposed.get(&table) {
            // The table's own names come with each key; an empty map means "as the key says".
            junctions.push((name, HashMap::new(), false));
        }
        for &(name, columns) in &self.views {
            let mut shown = HashMap::new();
            for attnum in pk {
                // The first name a view gives a key column, as PostgREST takes it.
                if let Some((column, _)) = columns.iter().find(|(_, o)| *o == (table, *attnum)) {
                    shown.insert(*attnum, column.clone());
                }
            }
            if shown.len() == pk.len() {
                junctions.push((name, shown, true));
            }
        }
        junctions
    }

    /// The many-to-many relationships with a view at one end or as the junction: a table whose
    /// two foreign keys' columns are all in its primary key joins the ends of both.
    fn junction_relationships(&self, out: &mut Vec<Relationship>) {
        let mut tables: Vec<u32> = self.foreign_keys.iter().map(|fk| fk.table).collect();
        tables.dedup();
        tables.sort_unstable();
        tables.dedup();
        for table in tables {
            let Some(pk) = self.primary_keys.get(&table).filter(|pk| !pk.is_empty()) else {
                continue;
            };
            let keys: Vec<&ForeignKeyRow> = self
                .foreign_keys
                .iter()
                .filter(|fk| fk.table == table)
                .collect();
            let junctions = self.junctions(table, pk);
            for a in &keys {
                for b in &keys {
                    if a.constraint == b.constraint
                        || !a.attnums.iter().chain(&b.attnums).all(|n| pk.contains(n))
                    {
                        continue;
                    }
                    let sources = self.ends(a.foreign, &a.foreign_attnums, &a.foreign_columns);
                    let targets = self.ends(b.foreign, &b.foreign_attnums, &b.foreign_columns);
                    for (junction, names, junction_view) in &junctions {
                        let in_junction = |fk: &ForeignKeyRow| -> Vec<String> {
                            if names.is_empty() {
                                return fk.columns.clone();
                            }
                            fk.attnums
                                .iter()
                                .filter_map(|n| names.get(n).cloned())
                                .collect()
                        };
                        for source in &sources {
                            for target in &targets {
                                if !(*junction_view || source.view || target.view) {
                                    continue;
                                }
                                let key = |fk: &ForeignKeyRow, end: &End<'_>| ForeignKey {
                                    constraint: fk.constraint.clone(),
                                    columns: end
                                        .columns
                                        .iter()
                                        .cloned()
                                        .zip(in_junction(fk))
                                        .collect(),
                                };
                                out.push(Relationship {
                                    table: source.name.clone(),
                                    foreign_table: target.name.clone(),
                                    cardinality: Cardinality::ManyToMany(Junction {
                                        table: (*junction).clone(),
                                        source: key(a, source),
                                        target: key(b, target),
                                    }),
                                    is_self: source.name == target.name,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every relationship a view takes part in.
    pub fn relationships(&self) -> Vec<Relationship> {
        let mut out = Vec::new();
        self.key_relationships(&mut out);
        self.junction_relationships(&mut out);
        out
    }

    /// Each exposed view's primary key: the columns showing the whole primary key of a table it
    /// selects from (of each such table, in the order the view shows them).
    pub fn view_primary_keys(&self) -> Vec<(QualifiedName, Vec<String>)> {
        let mut keys = Vec::new();
        for &(name, columns) in &self.views {
            let mut bases: Vec<u32> = Vec::new();
            for (_, (table, _)) in columns {
                if !bases.contains(table) {
                    bases.push(*table);
                }
            }
            let mut key = Vec::new();
            for base in bases {
                let Some(pk) = self.primary_keys.get(&base).filter(|pk| !pk.is_empty()) else {
                    continue;
                };
                let shown: Vec<String> = pk
                    .iter()
                    .filter_map(|attnum| {
                        columns
                            .iter()
                            .find(|(_, origin)| *origin == (base, *attnum))
                            .map(|(column, _)| column.clone())
                    })
                    .collect();
                if shown.len() == pk.len() {
                    key.extend(shown);
                }
            }
            if !key.is_empty() {
                keys.push((name.clone(), key));
            }
        }
        keys
    }
}

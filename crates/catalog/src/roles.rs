//! Role DDL: CREATE, ALTER (attributes and RENAME) and DROP ROLE, and a
//! database's owner. Each change writes pg_authid (or pg_database) rows
//! under the transaction's xid and edits its private relcache copy, as
//! `ddl.rs` does for the other objects; the policy around them (reserved
//! names, permissions, who may not be dropped) is `exec::commands::role`.

use std::sync::Arc;

use common::{Oid, PgError, PgResult, SqlState};

use crate::ddl::CatalogTxn;
use crate::model::Role;
use crate::relations::{self, PG_AUTHID, PG_DATABASE};
use crate::Catalog;

fn role_exists(name: &str) -> PgError {
    PgError::new(
        SqlState::DUPLICATE_OBJECT,
        format!("role \"{name}\" already exists"),
    )
}

fn role_missing(oid: Oid) -> PgError {
    PgError::internal(format!("role {oid} vanished"))
}

impl Catalog {
    /// Creates `role` with a new oid (the one given is ignored). Errors:
    /// 42710 if a role of that name exists.
    pub fn create_role(&self, txn: &mut CatalogTxn, cid: u32, mut role: Role) -> PgResult<Role> {
        if txn.working.role_by_name(&role.name).is_some() {
            return Err(role_exists(&role.name));
        }
        role.oid = self.oids.next()?;
        let tid = self
            .writer(txn, cid)
            .insert(&PG_AUTHID, &relations::role_row(&role))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.roles.insert(role.oid, tid);
        d.roles.insert(role.oid, role.clone());
        Ok(role)
    }

    /// Replaces the row of the role with `role.oid` by `role` (ALTER ROLE's
    /// attributes, RENAME). Errors: 42710 if another role has its name.
    pub fn update_role(&self, txn: &mut CatalogTxn, cid: u32, role: Role) -> PgResult<()> {
        if txn
            .working
            .role_by_name(&role.name)
            .is_some_and(|r| r.oid != role.oid)
        {
            return Err(role_exists(&role.name));
        }
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d
            .rows
            .roles
            .get(&role.oid)
            .copied()
            .ok_or_else(|| role_missing(role.oid))?;
        let tid = w.replace(&PG_AUTHID, old, &relations::role_row(&role))?;
        d.rows.roles.insert(role.oid, tid);
        d.roles.insert(role.oid, role);
        Ok(())
    }

    /// Deletes role `oid`'s row. What may not be dropped (the current
    /// user, owners) is checked by the caller.
    pub fn drop_role(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let tid = d.rows.roles.remove(&oid).ok_or_else(|| role_missing(oid))?;
        w.delete(&PG_AUTHID, tid)?;
        d.roles.remove(&oid);
        self.drop_comments(txn, cid, crate::comments::PG_AUTHID_OID, oid)
    }

    /// Makes role `owner` the owner of database `db` (CREATE DATABASE run
    /// by a role other than the bootstrap superuser).
    pub fn set_database_owner(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        db: Oid,
        owner: Oid,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let mut database = d
            .databases
            .get(&db)
            .cloned()
            .ok_or_else(|| PgError::internal(format!("database {db} vanished")))?;
        database.owner = owner;
        let old = d
            .rows
            .databases
            .get(&db)
            .copied()
            .ok_or_else(|| PgError::internal(format!("database {db} has no row")))?;
        let tid = w.replace(&PG_DATABASE, old, &relations::database_row(&database))?;
        d.rows.databases.insert(db, tid);
        d.databases.insert(db, database);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::buffer::BufferPool;
    use storage::smgr::Smgr;
    use txn::TransactionManager;

    use crate::{Catalog, Role, RoleAttributes};

    fn role(name: &str) -> Role {
        Role {
            oid: 0,
            name: name.into(),
            superuser: false,
            password: None,
            attrs: RoleAttributes {
                can_login: true,
                conn_limit: 3,
                valid_until: Some(1_000_000),
                ..RoleAttributes::default()
            },
        }
    }

    #[test]
    fn roles_commit_roll_back_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let wal = txn::test_wal(dir.path());
        let pool: &'static BufferPool = Box::leak(Box::new(BufferPool::new(
            64,
            Arc::new(Smgr::new(dir.path())),
        )));
        let tm: &'static TransactionManager =
            Box::leak(Box::new(TransactionManager::open(dir.path(), wal).unwrap()));
        let c = Catalog::open(dir.path(), pool, tm, false).unwrap();
        let ddl = |commit: bool, f: &dyn Fn(&mut crate::CatalogTxn)| {
            let xid = tm.begin().unwrap();
            let mut t = c.begin(xid, xid);
            f(&mut t);
            if commit {
                tm.commit(xid, txn::SyncCommit::On).unwrap();
            } else {
                tm.abort(xid);
            }
            c.end(t, commit).unwrap();
        };
        ddl(true, &|t| {
            c.create_role(t, 0, role("alice")).unwrap();
        });
        ddl(false, &|t| {
            c.create_role(t, 0, role("bob")).unwrap();
        });
        let dup = {
            let xid = tm.begin().unwrap();
            let mut t = c.begin(xid, xid);
            let e = c.create_role(&mut t, 0, role("alice")).unwrap_err();
            tm.abort(xid);
            c.end(t, false).unwrap();
            e
        };
        assert_eq!(dup.code, common::SqlState::DUPLICATE_OBJECT);
        ddl(true, &|t| {
            let mut a = t.catalog().role_by_name("alice").unwrap().clone();
            a.name = "carol".into();
            a.attrs.create_db = true;
            c.update_role(t, 0, a).unwrap();
        });
        let snap = c.snapshot();
        assert!(snap.role_by_name("bob").is_none());
        let carol = snap.role_by_name("carol").unwrap().clone();
        assert!(carol.attrs.create_db && carol.attrs.can_login);

        // The rows, not the relcache, are what a restart sees.
        let reopened = Catalog::open(dir.path(), pool, tm, false).unwrap();
        let r = reopened.snapshot().role_by_name("carol").unwrap().clone();
        assert_eq!(r.attrs, carol.attrs);
        assert!(reopened.snapshot().role_by_name("alice").is_none());

        ddl(true, &|t| c.drop_role(t, 0, carol.oid).unwrap());
        assert!(c.snapshot().role_by_name("carol").is_none());
        let reopened = Catalog::open(dir.path(), pool, tm, false).unwrap();
        assert_eq!(reopened.snapshot().roles.len(), 1);
    }
}

/// The model-independent part of the server schema: bookkeeping tables, value codecs,
/// triggers, and the push and pull functions. Entity tables and their columns come from the
/// model (``SyncSchema``); these functions read the installed field list (`fields`) at run
/// time, so an install from an older model never narrows what a newer one installed.
///
/// Placeholders: `@S@` is the quoted schema name, `@SL@` the schema name as a string literal.
enum SyncServerSQL {
    /// The format these statements install; an install refuses a schema of a newer format.
    static let format = 1

    /// Custom SQLSTATEs. `CF001`: the server's schema is behind the pushing client's model
    /// (unknown entity or field): the push fails as a whole and nothing advances, so no change
    /// is lost; installing the newer model fixes it. `CF002`: a malformed change, rejected.
    static let statements: [String] = [
        // Bookkeeping.
        #"""
        CREATE TABLE IF NOT EXISTS @S@.meta (key text PRIMARY KEY, value text NOT NULL)
        """#,
        #"""
        INSERT INTO @S@.meta (key, value) VALUES ('format', '\#(format)'), ('gc_floor', '0')
        ON CONFLICT (key) DO NOTHING
        """#,
        #"""
        DO $$
        BEGIN
            IF (SELECT value::integer FROM @S@.meta WHERE key = 'format') > \#(format) THEN
                RAISE EXCEPTION 'schema % was installed by a newer CofferSync (format %); this one installs format \#(format)',
                    @SL@, (SELECT value FROM @S@.meta WHERE key = 'format');
            END IF;
        END
        $$
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.entities (entity text PRIMARY KEY)
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.fields (
            entity text NOT NULL REFERENCES @S@.entities,
            field text NOT NULL,
            kind text NOT NULL,
            coffer_type text NOT NULL,
            PRIMARY KEY (entity, field)
        )
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.tombstones (
            entity text NOT NULL,
            sync_id uuid NOT NULL,
            _txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            _hlc bigint NOT NULL,
            _origin uuid,
            deleted_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (entity, sync_id)
        )
        """#,
        #"""
        CREATE INDEX IF NOT EXISTS tombstones_cursor ON @S@.tombstones (entity, _txid, sync_id)
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.clients (
            client_id uuid PRIMARY KEY,
            last_mid bigint NOT NULL DEFAULT 0,
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_seen timestamptz NOT NULL DEFAULT now()
        )
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.rejections (
            id bigserial PRIMARY KEY,
            client_id uuid NOT NULL,
            mid bigint NOT NULL,
            entity text,
            sync_id text,
            reason text NOT NULL,
            change jsonb NOT NULL,
            rejected_at timestamptz NOT NULL DEFAULT now()
        )
        """#,

        // The server's clock as an HLC (milliseconds << 16), for writes that carry none.
        #"""
        CREATE OR REPLACE FUNCTION @S@._server_hlc() RETURNS bigint LANGUAGE sql VOLATILE AS $$
            SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 16
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._bad_value(field text, expected text, value jsonb) RETURNS void
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            IF jsonb_typeof(value) = 'object' AND value ? 'nul' THEN
                RAISE EXCEPTION 'field "%": text cannot hold U+0000', field USING ERRCODE = '22P05';
            END IF;
            RAISE EXCEPTION 'field "%": expected %, got %', field, expected, left(value::text, 80)
                USING ERRCODE = '22023';
        END
        $$
        """#,

        // Decoders: a wire value (jsonb) to its column's type, refusing anything inexact
        // with a message that names the field. JSON null is SQL NULL.
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bool(v jsonb, field text) RETURNS boolean
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'boolean' THEN RETURN v::boolean;
                ELSE PERFORM @S@._bad_value(field, 'a boolean', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_integer(v jsonb, field text, low numeric, high numeric) RETURNS numeric
        LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE
            n numeric;
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'number' THEN n := v::numeric;
                WHEN 'string' THEN
                    IF (v #>> '{}') !~ '^-?[0-9]{1,20}$' THEN
                        PERFORM @S@._bad_value(field, 'an integer', v);
                    END IF;
                    n := (v #>> '{}')::numeric;
                ELSE PERFORM @S@._bad_value(field, 'an integer', v);
            END CASE;
            IF n <> trunc(n) OR n < low OR n > high THEN
                PERFORM @S@._bad_value(field, format('an integer in %s...%s', low, high), v);
            END IF;
            RETURN n;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bigint(v jsonb, field text) RETURNS bigint
        LANGUAGE sql IMMUTABLE AS $$
            SELECT @S@._dec_integer(v, field, -9223372036854775808, 9223372036854775807)::bigint
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uint64(v jsonb, field text) RETURNS numeric
        LANGUAGE sql IMMUTABLE AS $$
            SELECT @S@._dec_integer(v, field, 0, 18446744073709551615)
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_double(v jsonb, field text) RETURNS double precision
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                -- numeric to double precision rounds correctly: the shortest decimal that
                -- round-trips a double comes back as that double.
                WHEN 'number' THEN RETURN v::double precision;
                WHEN 'string' THEN
                    IF (v #>> '{}') IN ('NaN', 'Infinity', '-Infinity', '-0') THEN
                        RETURN (v #>> '{}')::double precision;
                    END IF;
                    PERFORM @S@._bad_value(field, 'a number, "NaN", "Infinity", "-Infinity" or "-0"', v);
                ELSE PERFORM @S@._bad_value(field, 'a number', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_text(v jsonb, field text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'string' THEN RETURN v #>> '{}';
                ELSE PERFORM @S@._bad_value(field, 'a string', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bytea(v jsonb, field text) RETURNS bytea
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'string' THEN
                    IF length(v #>> '{}') % 4 = 0 AND (v #>> '{}') ~ '^[A-Za-z0-9+/]*={0,2}$' THEN
                        RETURN decode(v #>> '{}', 'base64');
                    END IF;
                    PERFORM @S@._bad_value(field, 'base64', v);
                ELSE PERFORM @S@._bad_value(field, 'a base64 string', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uuid(v jsonb, field text) RETURNS uuid
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'string' THEN
                    IF (v #>> '{}') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                        RETURN (v #>> '{}')::uuid;
                    END IF;
                    PERFORM @S@._bad_value(field, 'a UUID', v);
                ELSE PERFORM @S@._bad_value(field, 'a UUID string', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_jsonb(v jsonb, field text) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE v END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._elements(v jsonb, field text) RETURNS SETOF jsonb
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            IF jsonb_typeof(v) <> 'array' THEN
                PERFORM @S@._bad_value(field, 'an array', v);
            END IF;
            IF EXISTS (SELECT 1 FROM jsonb_array_elements(v) e WHERE jsonb_typeof(e) = 'null') THEN
                PERFORM @S@._bad_value(field, 'an array without nulls', v);
            END IF;
            RETURN QUERY SELECT e FROM jsonb_array_elements(v) WITH ORDINALITY AS t(e, i) ORDER BY i;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bool_array(v jsonb, field text) RETURNS boolean[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_bool(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bigint_array(v jsonb, field text) RETURNS bigint[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_bigint(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uint64_array(v jsonb, field text) RETURNS numeric[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_uint64(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_double_array(v jsonb, field text) RETURNS double precision[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_double(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_text_array(v jsonb, field text) RETURNS text[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_text(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uuid_array(v jsonb, field text) RETURNS uuid[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_uuid(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,

        // Encoders: a column's value to its wire form (the inverse of the decoders).
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_double(d double precision) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE
                WHEN d IS NULL THEN 'null'::jsonb
                WHEN d = 'NaN'::double precision OR d = 'Infinity'::double precision
                    OR d = '-Infinity'::double precision THEN to_jsonb(d::text)
                WHEN d = 0 AND d::text = '-0' THEN '"-0"'::jsonb
                ELSE to_jsonb(d)
            END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_uint64(n numeric) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN n IS NULL THEN 'null'::jsonb ELSE to_jsonb(n::text) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_bytea(b bytea) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN b IS NULL THEN 'null'::jsonb
                ELSE to_jsonb(translate(encode(b, 'base64'), E'\n', '')) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_double_array(a double precision[]) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN a IS NULL THEN 'null'::jsonb ELSE coalesce(
                (SELECT jsonb_agg(@S@._enc_double(e) ORDER BY i) FROM unnest(a) WITH ORDINALITY AS t(e, i)),
                '[]'::jsonb) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_uint64_array(a numeric[]) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN a IS NULL THEN 'null'::jsonb ELSE coalesce(
                (SELECT jsonb_agg(e::text ORDER BY i) FROM unnest(a) WITH ORDINALITY AS t(e, i)),
                '[]'::jsonb) END
        $$
        """#,

        // The SQL expression that encodes a column of a kind (used to build pull queries).
        #"""
        CREATE OR REPLACE FUNCTION @S@._encoder(kind text, col text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE kind
                WHEN 'double' THEN format('%s._enc_double(%I)', quote_ident(@SL@), col)
                WHEN 'double[]' THEN format('%s._enc_double_array(%I)', quote_ident(@SL@), col)
                WHEN 'uint64' THEN format('%s._enc_uint64(%I)', quote_ident(@SL@), col)
                WHEN 'uint64[]' THEN format('%s._enc_uint64_array(%I)', quote_ident(@SL@), col)
                WHEN 'bytea' THEN format('%s._enc_bytea(%I)', quote_ident(@SL@), col)
                ELSE format('coalesce(to_jsonb(%I), ''null''::jsonb)', col)
            END
        $$
        """#,
        // The SQL expression that decodes field `field` of the jsonb `$1` into its kind.
        #"""
        CREATE OR REPLACE FUNCTION @S@._decoder(kind text, field text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT format('%s.%I($1 -> %L, %L)', quote_ident(@SL@),
                '_dec_' || replace(kind, '[]', '_array'), field, field)
        $$
        """#,

        // Installs one field of an entity: registers it, refuses a changed kind, adds the
        // column if it is not there. Never drops or alters an existing column.
        #"""
        CREATE OR REPLACE FUNCTION @S@._install_field(entity text, field text, kind text, coffer_type text, column_type text)
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            installed text;
        BEGIN
            SELECT f.kind INTO installed FROM @S@.fields f WHERE f.entity = _install_field.entity AND f.field = _install_field.field;
            IF FOUND AND installed <> kind THEN
                RAISE EXCEPTION 'field %.% is % on the server but % in this model: a column never changes type; rename the property',
                    entity, field, installed, kind;
            END IF;
            INSERT INTO @S@.fields (entity, field, kind, coffer_type) VALUES (entity, field, kind, coffer_type)
                ON CONFLICT DO NOTHING;
            IF NOT EXISTS (SELECT 1 FROM information_schema.columns c
                           WHERE c.table_schema = @SL@ AND c.table_name = entity AND c.column_name = field) THEN
                EXECUTE format('ALTER TABLE %I.%I ADD COLUMN %I %s', @SL@, entity, field, column_type);
            END IF;
        END
        $$
        """#,

        // Triggers. Every insert and update is stamped with its transaction id, so pulls see
        // plain-SQL writes too; a plain-SQL write also gets the server's HLC on each field it
        // changed (a push sets the clocks itself and marks itself with coffer.origin).
        #"""
        CREATE OR REPLACE FUNCTION @S@._stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            hlc bigint;
            changed jsonb;
            before jsonb;
            clocks jsonb;
            k text;
            v jsonb;
        BEGIN
            NEW._txid := pg_current_xact_id();
            IF TG_OP = 'UPDATE' AND NEW.sync_id IS DISTINCT FROM OLD.sync_id THEN
                RAISE EXCEPTION 'sync_id of %.% cannot change (delete the row and insert a new one)',
                    TG_TABLE_SCHEMA, TG_TABLE_NAME;
            END IF;
            IF coalesce(current_setting('coffer.origin', true), '') = '' THEN
                hlc := @S@._server_hlc();
                changed := to_jsonb(NEW) - ARRAY['sync_id', '_txid', '_hlc', '_origin', '_clocks'];
                IF TG_OP = 'UPDATE' THEN
                    before := to_jsonb(OLD);
                    clocks := coalesce(OLD._clocks, '{}');
                ELSE
                    before := '{}';
                    clocks := '{}';
                END IF;
                FOR k, v IN SELECT * FROM jsonb_each(changed) LOOP
                    IF v IS DISTINCT FROM coalesce(before -> k, 'null'::jsonb) THEN
                        clocks := clocks || jsonb_build_object(k, jsonb_build_array(hlc, '00000000-0000-0000-0000-000000000000'));
                    END IF;
                END LOOP;
                NEW._clocks := clocks;
                NEW._hlc := greatest(hlc, CASE WHEN TG_OP = 'UPDATE' THEN OLD._hlc END);
                NEW._origin := NULL;
            END IF;
            IF TG_OP = 'INSERT' THEN
                DELETE FROM @S@.tombstones t WHERE t.entity = TG_TABLE_NAME AND t.sync_id = NEW.sync_id;
            END IF;
            RETURN NEW;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO @S@.tombstones AS t (entity, sync_id, _txid, _hlc, _origin)
            VALUES (TG_TABLE_NAME, OLD.sync_id, pg_current_xact_id(),
                    coalesce(nullif(current_setting('coffer.hlc', true), '')::bigint, @S@._server_hlc()),
                    nullif(current_setting('coffer.origin', true), '')::uuid)
            ON CONFLICT (entity, sync_id) DO UPDATE
                SET _txid = EXCLUDED._txid, _hlc = EXCLUDED._hlc, _origin = EXCLUDED._origin, deleted_at = now();
            RETURN OLD;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'TRUNCATE of %.% would not reach the replicas: use DELETE', TG_TABLE_SCHEMA, TG_TABLE_NAME;
        END
        $$
        """#,

        // Applies one change of a push. Returns NULL when applied (or when every field lost
        // its clock comparison), else the reason it was rejected.
        #"""
        CREATE OR REPLACE FUNCTION @S@._apply(client uuid, change jsonb, clock_limit bigint) RETURNS text
        LANGUAGE plpgsql AS $$
        DECLARE
            entity_name text := change ->> 'entity';
            op text := change ->> 'op';
            id uuid;
            kinds jsonb;
            fields jsonb := coalesce(change -> 'fields', '{}');
            clocks jsonb := coalesce(change -> 'clocks', '{}');
            default_hlc bigint;
            hlc bigint;
            max_hlc bigint := 0;
            current_clocks jsonb;
            winners jsonb;
            won_clocks jsonb;
            field text;
            columns text;
            expressions text;
            inserted integer;
        BEGIN
            IF entity_name IS NULL OR op IS NULL OR jsonb_typeof(change -> 'id') IS DISTINCT FROM 'string' THEN
                RAISE EXCEPTION 'a change needs "entity", "op" and "id"' USING ERRCODE = 'CF002';
            END IF;
            IF (change ->> 'id') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                RAISE EXCEPTION '"id" is not a UUID: %', change ->> 'id' USING ERRCODE = 'CF002';
            END IF;
            id := (change ->> 'id')::uuid;
            SELECT jsonb_object_agg(f.field, f.kind) INTO kinds FROM @S@.fields f WHERE f.entity = entity_name;
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = entity_name) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %: install the newer model', entity_name, @SL@
                    USING ERRCODE = 'CF001';
            END IF;
            kinds := coalesce(kinds, '{}');
            IF jsonb_typeof(fields) <> 'object' OR jsonb_typeof(clocks) <> 'object' THEN
                RAISE EXCEPTION '"fields" and "clocks" must be objects' USING ERRCODE = 'CF002';
            END IF;
            IF change ? 'hlc' THEN
                default_hlc := @S@._dec_integer(change -> 'hlc', 'hlc', 0, 9223372036854775807)::bigint;
            END IF;

            IF op = 'delete' THEN
                hlc := least(coalesce(default_hlc, @S@._server_hlc()), clock_limit);
                PERFORM set_config('coffer.hlc', hlc::text, true);
                -- Deletes win: whatever the row's clocks, it goes; the trigger leaves the tombstone.
                EXECUTE format('DELETE FROM %I.%I WHERE sync_id = $1', @SL@, entity_name) USING id;
                GET DIAGNOSTICS inserted = ROW_COUNT;
                IF inserted = 0 THEN
                    INSERT INTO @S@.tombstones (entity, sync_id, _hlc, _origin) VALUES (entity_name, id, hlc, client)
                        ON CONFLICT DO NOTHING;
                END IF;
                RETURN NULL;
            ELSIF op <> 'upsert' THEN
                RAISE EXCEPTION 'unknown op "%"', op USING ERRCODE = 'CF002';
            END IF;

            -- Every field known to the server, with its clock (clamped to the server's limit).
            FOR field IN SELECT jsonb_object_keys(fields) LOOP
                IF NOT kinds ? field THEN
                    RAISE EXCEPTION 'field "%.%" is not installed in schema %: install the newer model', entity_name, field, @SL@
                        USING ERRCODE = 'CF001';
                END IF;
                IF clocks ? field THEN
                    hlc := @S@._dec_integer(clocks -> field, 'clock of ' || field, 0, 9223372036854775807)::bigint;
                ELSIF default_hlc IS NOT NULL THEN
                    hlc := default_hlc;
                ELSE
                    RAISE EXCEPTION 'field "%" has no clock', field USING ERRCODE = 'CF002';
                END IF;
                clocks := clocks || jsonb_build_object(field, jsonb_build_array(least(hlc, clock_limit), client));
                max_hlc := greatest(max_hlc, least(hlc, clock_limit));
            END LOOP;
            PERFORM set_config('coffer.hlc', max_hlc::text, true);

            FOR attempt IN 1..2 LOOP
                EXECUTE format('SELECT _clocks FROM %I.%I WHERE sync_id = $1 FOR UPDATE', @SL@, entity_name)
                    INTO current_clocks USING id;
                IF current_clocks IS NULL THEN
                    IF EXISTS (SELECT 1 FROM @S@.tombstones t WHERE t.entity = entity_name AND t.sync_id = id) THEN
                        RETURN 'deleted: the object was deleted, a change does not bring it back';
                    END IF;
                    columns := '';
                    expressions := '';
                    won_clocks := '{}';
                    FOR field IN SELECT jsonb_object_keys(fields) LOOP
                        columns := columns || ', ' || quote_ident(field);
                        expressions := expressions || ', ' || @S@._decoder(kinds ->> field, field);
                        won_clocks := won_clocks || jsonb_build_object(field, clocks -> field);
                    END LOOP;
                    EXECUTE format('INSERT INTO %I.%I (sync_id, _hlc, _origin, _clocks%s) VALUES ($2, $3, $4, $5%s) '
                                   'ON CONFLICT (sync_id) DO NOTHING', @SL@, entity_name, columns, expressions)
                        USING fields, id, max_hlc, client, won_clocks;
                    GET DIAGNOSTICS inserted = ROW_COUNT;
                    IF inserted = 1 THEN
                        RETURN NULL;
                    END IF;
                    -- Another transaction inserted it first: merge into its row.
                    CONTINUE;
                END IF;

                -- Per-field last writer wins by (hlc, origin).
                expressions := '';
                won_clocks := '{}';
                FOR field IN SELECT jsonb_object_keys(fields) LOOP
                    IF NOT current_clocks ? field
                        OR ((clocks -> field ->> 0)::bigint, (clocks -> field ->> 1)::uuid)
                            > ((current_clocks -> field ->> 0)::bigint, (current_clocks -> field ->> 1)::uuid) THEN
                        expressions := expressions || format(', %I = ', field) || @S@._decoder(kinds ->> field, field);
                        won_clocks := won_clocks || jsonb_build_object(field, clocks -> field);
                    END IF;
                END LOOP;
                IF won_clocks = '{}' THEN
                    RETURN NULL;
                END IF;
                EXECUTE format('UPDATE %I.%I SET _clocks = _clocks || $3, _hlc = greatest(_hlc, $4), _origin = $5%s '
                               'WHERE sync_id = $2', @SL@, entity_name, expressions)
                    USING fields, id, won_clocks, max_hlc, client;
                RETURN NULL;
            END LOOP;
            RAISE EXCEPTION 'could not insert or update % %', entity_name, id;
        END
        $$
        """#,

        // Push: applies a batch of changes of one client in one transaction. Changes whose
        // mid the client already pushed are skipped (a resent batch changes nothing);
        // rejected changes are recorded and the batch goes on.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_push(client uuid, batch jsonb) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            applied_mid bigint;
            change jsonb;
            mid bigint;
            reason text;
            rejected jsonb := '[]';
            clock_limit bigint;
        BEGIN
            IF client IS NULL THEN
                RAISE EXCEPTION 'coffer_push needs a client id';
            END IF;
            IF jsonb_typeof(batch) IS DISTINCT FROM 'array' THEN
                RAISE EXCEPTION 'coffer_push takes a JSON array of changes';
            END IF;
            INSERT INTO @S@.clients (client_id) VALUES (client) ON CONFLICT DO NOTHING;
            SELECT c.last_mid INTO applied_mid FROM @S@.clients c WHERE c.client_id = client FOR UPDATE;
            -- A clock more than five minutes ahead of the server's is pulled back to that.
            clock_limit := ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 300000) << 16) | 65535;
            FOR change IN SELECT e FROM jsonb_array_elements(batch) WITH ORDINALITY AS t(e, i) ORDER BY i LOOP
                IF jsonb_typeof(change -> 'mid') IS DISTINCT FROM 'number' THEN
                    RAISE EXCEPTION 'every change needs a numeric "mid": %', left(change::text, 200);
                END IF;
                mid := (change ->> 'mid')::bigint;
                CONTINUE WHEN mid <= applied_mid;
                PERFORM set_config('coffer.origin', client::text, true);
                BEGIN
                    reason := @S@._apply(client, change, clock_limit);
                EXCEPTION
                    WHEN SQLSTATE 'CF002' OR data_exception OR integrity_constraint_violation THEN
                        reason := SQLERRM;
                END;
                IF reason IS NOT NULL THEN
                    INSERT INTO @S@.rejections (client_id, mid, entity, sync_id, reason, change)
                        VALUES (client, mid, change ->> 'entity', change ->> 'id', reason, change);
                    rejected := rejected || jsonb_build_array(jsonb_build_object('mid', mid, 'reason', reason));
                END IF;
                applied_mid := mid;
            END LOOP;
            PERFORM set_config('coffer.origin', '', true);
            PERFORM set_config('coffer.hlc', '', true);
            UPDATE @S@.clients c SET last_mid = applied_mid, last_seen = now() WHERE c.client_id = client;
            RETURN jsonb_build_object('lastMid', applied_mid, 'txid', pg_current_xact_id()::text, 'rejected', rejected);
        END
        $$
        """#,

        // Pull: one page of an entity's changes (rows and tombstones) after `cursor`, below
        // the visibility horizon, in (_txid, sync_id) order, with the cursor to pass next.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_pull(entity text, from_cursor text, page_limit integer) RETURNS jsonb
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            horizon xid8 := pg_snapshot_xmin(pg_current_snapshot());
            after_txid xid8;
            after_id uuid;
            encoded text;
            changes jsonb;
            total integer;
            last_change jsonb;
            next_cursor text;
        BEGIN
            IF page_limit IS NULL OR page_limit < 1 THEN
                RAISE EXCEPTION 'page_limit must be at least 1';
            END IF;
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = coffer_pull.entity) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity, @SL@ USING ERRCODE = 'CF001';
            END IF;
            IF coalesce(from_cursor, '') = '' THEN
                after_txid := '0'::xid8;
            ELSIF from_cursor ~ '^[0-9]{1,20}$' THEN
                after_txid := from_cursor::xid8;
            ELSIF from_cursor ~* '^[0-9]{1,20}/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                after_txid := split_part(from_cursor, '/', 1)::xid8;
                after_id := split_part(from_cursor, '/', 2)::uuid;
            ELSE
                RAISE EXCEPTION 'not a pull cursor: %', from_cursor;
            END IF;

            SELECT coalesce(string_agg(format('jsonb_build_object(%L, %s)', f.field, @S@._encoder(f.kind, f.field)),
                                       ' || ' ORDER BY f.field), '''{}''::jsonb')
                INTO encoded FROM @S@.fields f WHERE f.entity = coffer_pull.entity;

            EXECUTE format($q$
                SELECT coalesce(jsonb_agg(c ORDER BY t, s), '[]'), count(*)
                FROM (
                    SELECT * FROM (
                        SELECT jsonb_build_object('op', 'upsert', 'id', r.sync_id, 'txid', r._txid::text,
                                   'hlc', r._hlc::text, 'origin', r._origin, 'clocks', r._clocks, 'fields', %s) AS c,
                               r._txid AS t, r.sync_id AS s
                        FROM %I.%I r
                        WHERE r._txid < $1 AND CASE WHEN $3::uuid IS NULL THEN r._txid >= $2
                                                    ELSE (r._txid, r.sync_id) > ($2, $3::uuid) END
                        ORDER BY r._txid, r.sync_id
                        LIMIT $4
                    ) live_rows
                    UNION ALL
                    SELECT * FROM (
                        SELECT jsonb_build_object('op', 'delete', 'id', d.sync_id, 'txid', d._txid::text,
                                   'hlc', d._hlc::text, 'origin', d._origin) AS c,
                               d._txid AS t, d.sync_id AS s
                        FROM %I.tombstones d
                        WHERE d.entity = $5 AND d._txid < $1 AND CASE WHEN $3::uuid IS NULL THEN d._txid >= $2
                                                    ELSE (d._txid, d.sync_id) > ($2, $3::uuid) END
                        ORDER BY d._txid, d.sync_id
                        LIMIT $4
                    ) deleted_rows
                    ORDER BY t, s
                    LIMIT $4
                ) page
            $q$, encoded, @SL@, entity, @SL@)
            INTO changes, total
            USING horizon, after_txid, after_id, page_limit + 1, entity;

            IF total > page_limit THEN
                changes := changes - page_limit;
                last_change := changes -> (page_limit - 1);
                next_cursor := (last_change ->> 'txid') || '/' || (last_change ->> 'id');
            ELSIF horizon > after_txid THEN
                next_cursor := horizon::text;
            ELSE
                next_cursor := coalesce(nullif(from_cursor, ''), '0');
            END IF;
            RETURN jsonb_build_object('changes', changes, 'cursor', next_cursor, 'more', total > page_limit);
        END
        $$
        """#,
    ]
}

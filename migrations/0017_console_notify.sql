-- The web console's live feed: a run's status and an approval's decision notify `baton_console`
-- with the run id, from whichever node wrote it, so one LISTEN on any node sees the whole fleet.
-- Deliveries notify nothing: NOTIFY serializes commits, and the outbox drain commits a status
-- change per sent row; a run page shows its deliveries as they are when it is drawn.
CREATE OR REPLACE FUNCTION baton_console_notify_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('baton_console', NEW.id);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION baton_console_notify_child() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.run_id IS NOT NULL THEN
    PERFORM pg_notify('baton_console', NEW.run_id);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER runs_console_notify AFTER INSERT OR UPDATE OF status, usage, ended_at ON runs
  FOR EACH ROW EXECUTE FUNCTION baton_console_notify_run();
--> statement-breakpoint
CREATE TRIGGER approvals_console_notify AFTER INSERT OR UPDATE OF decision ON approvals
  FOR EACH ROW EXECUTE FUNCTION baton_console_notify_child();

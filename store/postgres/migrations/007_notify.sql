-- 007: every change of a ticket's state or votes is announced on the
-- channel asu_tickets, its payload the ticket's id, when its transaction
-- commits: a replica waiting on the ticket wakes then, instead of polling.
CREATE FUNCTION asu_ticket_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('asu_tickets', NEW.id);
	RETURN NULL;
END
$$;
CREATE TRIGGER tickets_changed AFTER UPDATE OF state, votes ON tickets
	FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.votes IS DISTINCT FROM NEW.votes)
	EXECUTE FUNCTION asu_ticket_changed();

// Package tooluse turns a model's tool call into a gated call and the
// gate's answer into the tool result the model reads. It is the
// framework-neutral core of asu's adapters: the OpenAI, Anthropic, Eino
// and LangChainGo packages beside it only convert their SDK's types.
//
// # One call
//
// A [Request] is what the model wrote: the tool's name, its JSON
// arguments and the model's call id. A [Scope] is what the host knows and
// the model does not choose: the user and agent the call acts for, the
// session and task, the untrusted content the session has read. [Gate.Run]
// proposes the call to a stepup.Runtime; a call that needs a person is
// waited for up to [Options.Wait], and a runnable call is executed by its
// ticket id. The [Outcome] says what became of it, and [Outcome.Text] is
// the sentence the model reads.
//
// # Resuming
//
// A call still pending when the wait ends comes back as [Pending] with its
// ticket. [Gate.Resume] takes only that ticket id: it waits again and
// executes the call the gate stored when it was proposed. Nothing the host
// holds about the call (a checkpoint, the history, the arguments the model
// wrote) reaches the gate on resume, so editing it between approval and
// resume cannot change what runs.
//
// # One answer per call
//
// The model expects one answer to each call id. A host that holds the
// model's turn while a person decides keeps [Outcome.Deferred] instead of
// sending the "waits" text, and resumes with [Gate.ResumeDeferred], whose
// outcome carries the original call id: the SDK packages turn it into
// their tool result for that id.
//
// # Retries join the waiting ticket
//
// A model that writes a waiting call again under a new id (same tool,
// arguments in any JSON spelling, same scope) joins the waiting ticket
// ([Outcome.Joined]) instead of proposing a new one, and is answered from
// that ticket: still waiting, ran, failed, may have run, not run, or
// spent by another call joined to it (calls a framework runs in parallel
// included). The call runs at most once, by whichever of the calls on the
// ticket, or the original's resume, executes it first. A retry that
// joined the ticket is never proposed anew once this Gate has begun to
// execute it; only one that finds the ticket already decided otherwise
// (denied), spent elsewhere, expired or gone is proposed anew, as a new
// request the gate decides, and the person approves, again. Once a run of
// the ticket has been answered the Gate forgets it, so the same call
// written after that answer is a new request too. A Gate remembers the
// calls it saw waiting; another Gate over the same Runtime does not join
// them.
//
// # What the model is told
//
// Denials carry the gate's reason, meant for the model. A pending call
// says that it has not run and that nothing said in the conversation
// approves it. Errors are told by class (already used, ran and failed, may
// have run), never by their text: an executor's error is the
// integrator's, and a Runtime's errors are not the model's business.
package tooluse

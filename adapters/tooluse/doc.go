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
// their tool result for that id. A model that writes a waiting call again
// under a new id (same tool, arguments in any JSON spelling, same scope)
// joins the waiting ticket ([Outcome.Joined]) instead of proposing a new
// one; a call that was denied, spent or gone is proposed anew.
//
// # What the model is told
//
// Denials carry the gate's reason, meant for the model. A pending call
// says that it has not run and that nothing said in the conversation
// approves it. Errors are told by class (already used, ran and failed, may
// have run), never by their text: an executor's error is the
// integrator's, and a Runtime's errors are not the model's business.
package tooluse

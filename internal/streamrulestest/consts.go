package streamrulestest

// EarlyBatchBytes is how many bytes an early scanner lets arrive before it feeds them to
// its automatons (a chunk past it is fed at its end).
const EarlyBatchBytes = 64

// ReleaseBatchBytes is how many bytes held speech's release reads at a time: the client
// may be that far behind the answer.
const ReleaseBatchBytes = 16

// InterruptFooter follows every rule text in an interrupt block.
const InterruptFooter = "That reply was discarded and NOBODY saw it. Write the reply again, following the rule."

// RefusalLead opens the reminder a refused call's result carries in the prompt copy.
const RefusalLead = "This call was refused and did not run. "

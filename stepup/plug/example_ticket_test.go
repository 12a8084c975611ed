package plug_test

import (
	"context"
	"fmt"

	"github.com/agentstepup/asu/stepup/plug"
)

// A caller of Execute tells the executor which ticket it runs; the
// executor reads it back.
func ExampleWithTicket() {
	ctx := plug.WithTicket(context.Background(), "t_123")
	id, ok := plug.TicketOf(ctx)
	fmt.Println(id, ok)
	_, ok = plug.TicketOf(context.Background())
	fmt.Println(ok)
	// Output:
	// t_123 true
	// false
}

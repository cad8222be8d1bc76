package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/streamrules/streamrules/tracing/provider"
)

// The console exporter writes each span as one line of JSON when it ends; none gives no
// provider; an exporter New does not know is an error the caller words its own way.
func ExampleNew() {
	ctx := context.Background()
	var out bytes.Buffer
	tp, err := provider.New(ctx, provider.Config{Exporter: "console", ServiceName: "bot", Console: &out})
	if err != nil {
		panic(err)
	}
	_, span := tp.Tracer("example").Start(ctx, "streamrules.move")
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		panic(err)
	}
	var got struct {
		Name     string
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		panic(err)
	}
	for _, kv := range got.Resource {
		if kv.Key == "service.name" {
			fmt.Println(got.Name, "of", kv.Value.Value)
		}
	}

	tp, err = provider.New(ctx, provider.Config{Exporter: "none"})
	fmt.Println("none:", tp == nil, err)

	_, err = provider.New(ctx, provider.Config{Exporter: "zipkin"})
	fmt.Println(errors.Is(err, provider.ErrUnknownExporter), err)
	// Output:
	// streamrules.move of bot
	// none: true <nil>
	// true provider: "zipkin": unknown exporter: want console, otlp or none
}

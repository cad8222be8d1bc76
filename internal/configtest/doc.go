// Package configtest checks a Config's validation the way streamrules, middleware and
// rulesdb share: each field spoiled on its own is refused by an error that names it.
//
//	configtest.Refuses(t, "middleware: ", []configtest.Case[Config]{
//		{Field: "CallTimeout", Config: Config{CallTimeout: -time.Second}},
//	}, func(c *Config) error { _, err := New(nil, c); return err })
package configtest

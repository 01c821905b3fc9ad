"""The native (C) back end of the embedded switch (issue 20): packets moved in C."""

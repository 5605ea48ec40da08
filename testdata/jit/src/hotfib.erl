%% hotfib: the Erlang program of the JIT recording; fib/1 is the hot function.
-module(hotfib).
-export([main/1, fib/1]).

fib(0) -> 0;
fib(1) -> 1;
fib(N) -> fib(N - 1) + fib(N - 2).

loop(Until, Acc) ->
    case erlang:monotonic_time(millisecond) < Until of
        true -> loop(Until, Acc + fib(22));
        false -> Acc
    end.

main([Ms]) ->
    Until = erlang:monotonic_time(millisecond) + list_to_integer(Ms),
    io:format("~p~n", [loop(Until, 0)]),
    halt().

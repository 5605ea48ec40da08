# bash completion for perfconv: options, formats after -f, backends after --to,
# recordings by name (perf.data*, --threads directories) and outputs by suffix.
# Installed as /usr/share/bash-completion/completions/perfconv. tests/e2e_install.sh
# holds its option lists to `perfconv --help`, `perfconv upload --help`,
# `perfconv info --help` and `perfconv diff --help`.

_perfconv_convert_opts='--input --output --format --quiet --symfs --kallsyms --buildid-dir
	--no-demangle --no-inline --no-symbols --show-art-frames --cache-dir --cache-size --no-cache --jit-dir --pid --tid
	--comm --event --time --weight --with-pid --with-tid --annotate --srcline --cpu-label
	--title --inverted --width --minwidth --for --service --label --start-time --help
	--version'
_perfconv_upload_opts='--to --url --tenant --header --api-key-file --allow-http --proxy
	--dry-run --timeout --retry-cap --watch --delete-sent --max-backlog --keep-sent
	--trust-folder'
_perfconv_diff_opts='--absolute --top'
_perfconv_info_opts='--input --json --top --symfs --kallsyms --buildid-dir --jit-dir
	--cache-dir --cache-size --no-cache --help'
_perfconv_formats='folded samples pprof speedscope firefox chrome svg otlp'
_perfconv_backends='datadog pyroscope parca otlp'

# COMPREPLY from compgen's lines (names with spaces kept whole)
_perfconv_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# recordings: perf.data and its chunks, *.data, and directories (perf record --threads)
_perfconv_recordings()
{
	local d
	mapfile -t d < <(compgen -d -- "$1")
	_perfconv_reply -f -X '!*@(.data|perf.data*)' -- "$1"
	COMPREPLY=("${d[@]}" "${COMPREPLY[@]}")
	compopt -o filenames 2>/dev/null
}

_perfconv()
{
	local cur prev words cword sub='' i opts
	if declare -F _init_completion >/dev/null; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	fi
	shopt -s extglob
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in upload | info | diff) sub=${words[i]}; break ;; -*) ;; *) break ;; esac
	done

	case $prev in
	-i | --input)
		_perfconv_recordings "$cur"; return ;;
	-o | --output | --kallsyms | --api-key-file)
		compopt -o filenames 2>/dev/null
		_perfconv_reply -f -- "$cur"; return ;;
	--symfs | --buildid-dir | --cache-dir | --jit-dir | --watch)
		compopt -o filenames 2>/dev/null
		_perfconv_reply -d -- "$cur"; return ;;
	-f | --format)
		if [[ $sub == diff ]]; then
			_perfconv_reply -W 'folded top pprof svg' -- "$cur"
		else
			_perfconv_reply -W "$_perfconv_formats" -- "$cur"
		fi
		return ;;
	--to)
		_perfconv_reply -W "$_perfconv_backends" -- "$cur"; return ;;
	--for)
		_perfconv_reply -W 'datadog pyroscope parca go' -- "$cur"; return ;;
	--time)
		_perfconv_reply -W 'oncpu offcpu wall' -- "$cur"; return ;;
	--weight)
		_perfconv_reply -W 'samples period' -- "$cur"; return ;;
	--pid | --tid | --comm | --event | --title | --width | --minwidth | --service | \
		--label | --start-time | --url | --tenant | --header | --proxy | --timeout | \
		--retry-cap | --max-backlog | --keep-sent | --top | --cache-size)
		return ;;
	esac

	if [[ $cur == -* ]]; then
		case $sub in
		upload) opts="$_perfconv_upload_opts $_perfconv_convert_opts" ;;
		info) opts=$_perfconv_info_opts ;;
		diff) opts="$_perfconv_diff_opts $_perfconv_convert_opts" ;;
		*) opts=$_perfconv_convert_opts ;;
		esac
		_perfconv_reply -W "$opts" -- "$cur"
		return
	fi
	if [[ -z $sub && $cword -eq 1 ]]; then
		_perfconv_reply -W 'upload info diff' -- "$cur"
	fi
	local keep=("${COMPREPLY[@]}")
	_perfconv_recordings "$cur"
	COMPREPLY=("${keep[@]}" "${COMPREPLY[@]}")
}
complete -F _perfconv perfconv
